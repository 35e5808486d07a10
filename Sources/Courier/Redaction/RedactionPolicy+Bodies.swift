import Foundation

/// One replacement in a body: the bytes at `range` become `replacement`.
package struct RedactionEdit: Sendable, Equatable {
    package var range: Range<Int>
    package var replacement: [UInt8]
}

extension RedactionPolicy {
    /// The body as it may be written: the values of secret members and fields replaced by the
    /// placeholder, every other byte as it was.
    ///
    /// The content type chooses the reading: `multipart/…` (its text parts by name, and JSON
    /// inside them), `application/x-www-form-urlencoded`, and anything else as text in which
    /// JSON members are found (a JSON document, Server-Sent Events or NDJSON lines, even a body
    /// cut short). Without a content type, a one-line body of `name=value` pairs is read as a form.
    /// - Parameters:
    ///   - body: The body.
    ///   - contentType: Its `Content-Type`, if known.
    /// - Returns: The redacted body; `body` itself when nothing is secret.
    public func body(_ body: Data, contentType: String?) -> Data {
        let edits = bodyEdits(body, contentType: contentType)
        return edits.isEmpty ? body : Self.applying(edits, to: body)
    }

    /// The replacements ``body(_:contentType:)`` makes, in order, not overlapping; offsets from 0.
    package func bodyEdits(_ body: Data, contentType: String?) -> [RedactionEdit] {
        guard !body.isEmpty else { return [] }
        let bytes = [UInt8](body)
        return edits(bytes, 0..<bytes.count, contentType: contentType)
    }

    /// Multipart bodies inside multipart bodies read as such: deeper than this, a nested part is
    /// replaced whole. A hostile body of parts each naming a new boundary recursed once per
    /// ~50 bytes and rescanned the rest each time: the stack overflowed on a few megabytes (found
    /// by review).
    static let maxMultipartDepth = 4

    private func edits(
        _ bytes: [UInt8], _ span: Range<Int>, contentType: String?, depth: Int = 0
    ) -> [RedactionEdit] {
        let type = contentType.map { Self.mediaType($0) }
        let placeholderBytes = Array(placeholder.utf8)
        let sniffed = type == nil ? Self.sniffedBoundary(bytes, span) : nil
        if (type?.hasPrefix("multipart/") ?? false) || sniffed != nil, depth >= Self.maxMultipartDepth {
            return span.isEmpty ? [] : [RedactionEdit(range: span, replacement: placeholderBytes)]
        }
        if let type, type.hasPrefix("multipart/") {
            guard let boundary = contentType.flatMap({ Self.parameter("boundary", in: $0) }) else { return [] }
            return multipartEdits(bytes, span, boundary: Array(boundary.utf8), depth: depth)
        }
        if type == "application/x-www-form-urlencoded" || (type == nil && Self.looksLikeForm(bytes, span)) {
            return formEdits(bytes, span, placeholder: placeholderBytes)
        }
        if let sniffed {
            return multipartEdits(bytes, span, boundary: sniffed, depth: depth)
        }
        return jsonEdits(bytes, span)
    }

    /// The JSON members found in `span`, read as text.
    private func jsonEdits(_ bytes: [UInt8], _ span: Range<Int>) -> [RedactionEdit] {
        var scanner = JSONSecretScanner(bytes: bytes, span: span, placeholder: Array(placeholder.utf8)) {
            self.isSecretBodyField($0)
        }
        return scanner.edits()
    }

    /// `application/json; charset=utf-8` → `application/json`.
    static func mediaType(_ contentType: String) -> String {
        String(contentType.split(separator: ";", maxSplits: 1).first ?? "").trimmingWhitespace()
            .lowercased()
    }

    /// A parameter of a header value (`boundary=…`, `name="…"`), unquoted.
    static func parameter(_ name: String, in value: String) -> String? {
        for part in value.split(separator: ";").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
            guard pair.count == 2, pair[0].lowercased() == name else { continue }
            var value = Substring(pair[1])
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            return String(value)
        }
        return nil
    }

    // MARK: Forms

    /// One line of `name=value` pairs, without spaces, quotes or braces.
    private static func looksLikeForm(_ bytes: [UInt8], _ span: Range<Int>) -> Bool {
        guard span.count > 1, bytes[span].contains(UInt8(ascii: "=")) else { return false }
        let refused: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "[")]
        return !bytes[span].contains(where: refused.contains)
    }

    private func formEdits(_ bytes: [UInt8], _ span: Range<Int>, placeholder: [UInt8]) -> [RedactionEdit] {
        var edits: [RedactionEdit] = []
        var start = span.lowerBound
        while start < span.upperBound {
            let end = bytes[start..<span.upperBound].firstIndex(of: UInt8(ascii: "&")) ?? span.upperBound
            if let equals = bytes[start..<end].firstIndex(of: UInt8(ascii: "=")) {
                // A trailing line break (a form typed into a file) is not part of the value.
                var valueEnd = end
                while valueEnd > equals + 1, bytes[valueEnd - 1] == 0x0A || bytes[valueEnd - 1] == 0x0D {
                    valueEnd -= 1
                }
                if isSecretFormField(Self.decodedName(bytes[start..<equals])), valueEnd > equals + 1 {
                    edits.append(RedactionEdit(range: (equals + 1)..<valueEnd, replacement: placeholder))
                }
            }
            start = end + 1
        }
        return edits
    }

    // MARK: Multipart

    /// The boundary of a body that starts with `--boundary` and a `Content-Disposition` header.
    private static func sniffedBoundary(_ bytes: [UInt8], _ span: Range<Int>) -> [UInt8]? {
        guard span.count > 4, bytes[span.lowerBound] == UInt8(ascii: "-"),
            bytes[span.lowerBound + 1] == UInt8(ascii: "-"),
            let lineEnd = bytes[span].firstIndex(of: 0x0A)
        else { return nil }
        var end = lineEnd
        if end > span.lowerBound, bytes[end - 1] == 0x0D { end -= 1 }
        let boundary = Array(bytes[(span.lowerBound + 2)..<end])
        let head = String(decoding: bytes[lineEnd..<min(span.upperBound, lineEnd + 512)], as: UTF8.self).lowercased()
        return boundary.isEmpty || !head.contains("content-disposition") ? nil : boundary
    }

    private func multipartEdits(
        _ bytes: [UInt8], _ span: Range<Int>, boundary: [UInt8], depth: Int
    ) -> [RedactionEdit] {
        let delimiter = Array("--".utf8) + boundary
        var edits: [RedactionEdit] = []
        var positions: [Int] = []
        var index = span.lowerBound
        while let found = Self.find(delimiter, in: bytes, from: index, to: span.upperBound) {
            positions.append(found)
            index = found + delimiter.count
        }
        // Not the multipart body it says it is (its boundary never appears): read as text, so the
        // JSON members in it are still found.
        if positions.isEmpty { return jsonEdits(bytes, span) }
        // A body cut short (a log's excerpt) ends inside its last part: that part runs to the end.
        var ends = Array(positions.dropFirst())
        if let last = positions.last, last + delimiter.count + 2 <= span.upperBound,
            !(bytes[last + delimiter.count] == UInt8(ascii: "-")
                && bytes[last + delimiter.count + 1] == UInt8(ascii: "-"))
        {
            ends.append(span.upperBound)
        }
        for (start, next) in zip(positions, ends) {
            // The part: after the delimiter's line break, up to the line break before the next one.
            guard let lineEnd = bytes[(start + delimiter.count)..<next].firstIndex(of: 0x0A) else { continue }
            let partStart = lineEnd + 1
            var partEnd = next
            if partEnd > partStart, bytes[partEnd - 1] == 0x0A { partEnd -= 1 }
            if partEnd > partStart, bytes[partEnd - 1] == 0x0D { partEnd -= 1 }
            guard partStart < partEnd else { continue }
            let (headers, contentStart) = Self.partHeaders(bytes, partStart..<partEnd)
            guard contentStart <= partEnd else { continue }
            let disposition = headers["content-disposition"] ?? ""
            let name = Self.parameter("name", in: disposition)
            let isFile = Self.parameter("filename", in: disposition) != nil
            let type = headers["content-type"]
            if !isFile, let name, isSecretFormField(name) {
                if contentStart < partEnd {
                    edits.append(RedactionEdit(range: contentStart..<partEnd, replacement: Array(placeholder.utf8)))
                }
                continue
            }
            // Text and JSON parts are read like bodies of their own; other files stay as they are.
            let media = type.map { Self.mediaType($0) }
            // A multipart part inside one (`multipart/mixed`) is read too, within `maxMultipartDepth`.
            let readable = media.map {
                $0.hasPrefix("text/") || $0.contains("json") || $0.contains("form-urlencoded")
                    || $0.hasPrefix("multipart/")
            }
            if readable ?? !isFile {
                edits += self.edits(bytes, contentStart..<partEnd, contentType: type, depth: depth + 1)
            }
        }
        return edits
    }

    /// A part's headers (names lower-cased) and where its content starts.
    private static func partHeaders(_ bytes: [UInt8], _ span: Range<Int>) -> (headers: [String: String], content: Int) {
        var headers: [String: String] = [:]
        var lineStart = span.lowerBound
        while lineStart < span.upperBound {
            let lineEnd = bytes[lineStart..<span.upperBound].firstIndex(of: 0x0A) ?? span.upperBound
            var end = lineEnd
            if end > lineStart, bytes[end - 1] == 0x0D { end -= 1 }
            if end == lineStart { return (headers, min(lineEnd + 1, span.upperBound)) }
            let line = String(decoding: bytes[lineStart..<end], as: UTF8.self)
            if let colon = line.firstIndex(of: ":") {
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                    .trimmingWhitespace()
            }
            lineStart = lineEnd + 1
        }
        // No blank line: only headers, no content.
        return (headers, span.upperBound)
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int, to end: Int) -> Int? {
        guard !needle.isEmpty, end - start >= needle.count else { return nil }
        var index = start
        while index <= end - needle.count {
            if bytes[index] == needle[0], bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    // MARK: Applying

    /// `body` with `edits` made.
    package static func applying(_ edits: [RedactionEdit], to body: Data) -> Data {
        var result = Data()
        result.reserveCapacity(body.count)
        var offset = 0
        let base = body.startIndex
        for edit in edits where edit.range.lowerBound >= offset {
            result.append(body[(base + offset)..<(base + edit.range.lowerBound)])
            result.append(contentsOf: edit.replacement)
            offset = edit.range.upperBound
        }
        result.append(body[(base + offset)...])
        return result
    }

    /// The sizes of the pieces a body arrived in, for the body after `edits`: each boundary moves
    /// with the bytes before it; one inside a replaced value moves to its end.
    /// - Returns: `nil` when the sizes do not add up to a body `edits` fits.
    package static func sizes(_ sizes: [Int], after edits: [RedactionEdit]) -> [Int]? {
        guard !edits.isEmpty else { return sizes }
        var boundaries: [Int] = []
        var total = 0
        for size in sizes {
            guard size >= 0 else { return nil }
            let (sum, overflow) = total.addingReportingOverflow(size)
            guard !overflow else { return nil }
            total = sum
            var moved = total
            var shift = 0
            for edit in edits {
                if edit.range.upperBound <= total {
                    shift += edit.replacement.count - edit.range.count
                } else if edit.range.lowerBound < total {
                    moved = edit.range.upperBound
                    shift += edit.replacement.count - edit.range.count
                }
            }
            boundaries.append(moved + shift)
        }
        var previous = 0
        return boundaries.map { boundary in
            defer { previous = boundary }
            return boundary - previous
        }
    }
}
