import Foundation

/// The URL rules for targets.
///
/// - An empty path returns the base URL unchanged (its query kept, no slash added).
/// - Otherwise the path is appended with exactly one `/` between base and path, whatever slashes
///   either side brings. Characters that cannot stand in a path are percent-encoded; existing `%XX`
///   escapes are kept.
/// - A `?` in the path starts a query: `"search?q=swift"` is sent as `/search?q=swift` (never as
///   `%3F`). It follows the base URL's own query; task parameters come after both.
/// - `#` in a path is data, sent as `%23`.
/// - A path never leaves the base URL's path: a segment that is `.` or `..` (also percent-encoded,
///   or next to a backslash) is refused, since servers resolve it.
enum URLBuilder {
    // Delimiters are ASCII, so scanning is done on UTF-8 bytes: their indices are valid String
    // indices, and no grapheme breaking is needed (this runs for every request).
    private static let slash = UInt8(ascii: "/")
    private static let question = UInt8(ascii: "?")
    private static let hash = UInt8(ascii: "#")

    static func url(baseURL: URL, path: String) throws(CourierError) -> URL {
        // Issue 29: the base URL's text and the path are each read once, as contiguous bytes, and
        // the URL's text is written into one allocation; Foundation parses it once (the only parse
        // left, 40 % of this function).
        var absolute = baseURL.absoluteString
        let base = absolute.withUTF8 { BaseParts($0) }
        try base.check(absolute)
        if path.isEmpty { return baseURL }

        var pathText = path
        let built = absolute.withUTF8 { baseBytes in
            pathText.withUTF8 { pathBytes in build(base: baseBytes, parts: base, path: pathBytes) }
        }
        guard let built else {
            throw .requestMapping(
                "the path '\(Redaction.string(path))' has a '.' or '..' segment, which would leave the base URL's path")
        }
        if built.pathHasPercent {
            // A percent-encoded dot segment: decoded only for paths with a `%`.
            var pathPart = Substring(path)
            if let mark = path.utf8.firstIndex(of: question) { pathPart = path[..<mark] }
            if containsDotSegment(pathPart.drop { $0 == "/" }) {
                throw .requestMapping(
                    "the path '\(Redaction.string(path))' has a '.' or '..' segment, which would leave the base URL's path"
                )
            }
        }
        guard let url = URL(string: built.text) else {
            throw .requestMapping(
                "'\(Redaction.string(path))' appended to '\(Redaction.string(baseURL.absoluteString))' is not a valid URL"
            )
        }
        return url
    }

    /// Appends an already percent-encoded query to a URL, after any query it has.
    static func url(_ url: URL, appendingQuery query: String) throws(CourierError) -> URL {
        if query.isEmpty { return url }
        var absolute = url.absoluteString
        var query = query
        let text = absolute.withUTF8 { bytes in
            query.withUTF8 { queryBytes in
                let parts = BaseParts(bytes)
                let capacity = bytes.count + 2 + queryBytes.count
                return String(unsafeUninitializedCapacity: capacity) { out in
                    var writer = ByteWriter(out)
                    writer.append(UnsafeBufferPointer(rebasing: bytes[..<parts.end]))
                    writer.append(question)
                    if parts.query.count > 0 {
                        writer.append(UnsafeBufferPointer(rebasing: bytes[parts.query]))
                        writer.append(UInt8(ascii: "&"))
                    }
                    writer.append(queryBytes)
                    writer.append(UnsafeBufferPointer(rebasing: bytes[parts.fragment]))
                    return writer.count
                }
            }
        }
        guard let result = URL(string: text) else {
            throw .requestMapping(
                "the query '\(Redaction.string("?" + query))' does not fit '\(Redaction.string(url.absoluteString))'")
        }
        return result
    }

    /// Where a URL's text ends its part before the query, its query (without `?`) and its fragment
    /// (with `#`), and what is wrong with it as a base URL: one pass over its bytes each.
    struct BaseParts {
        /// The end of the part before the query and fragment.
        var end: Int
        /// The query, without its `?` (empty: none, or an empty one).
        var query: Range<Int>
        /// The fragment with its `#` (empty: none).
        var fragment: Range<Int>
        var problem: BaseURLProblem?

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            let (question, hash) = URLBuilder.delimiters(bytes)
            let fragmentStart = hash ?? bytes.count
            end = question ?? fragmentStart
            query = question.map { ($0 + 1)..<fragmentStart } ?? fragmentStart..<fragmentStart
            fragment = fragmentStart..<bytes.count
            problem = URLBuilder.baseURLProblem(bytes)
        }

        func check(_ absolute: String) throws(CourierError) {
            switch problem {
            case nil: return
            case .noScheme?:
                throw .requestMapping("'\(Redaction.string(absolute))' has no scheme (expected e.g. https://)")
            case .noHost?:
                throw .requestMapping("'\(Redaction.string(absolute))' has no host")
            }
        }
    }

    /// A URL's text, written once.
    struct Built {
        var text: String
        /// Whether the path (before its query) has a `%`: its percent-decoded segments are checked.
        var pathHasPercent: Bool
    }

    /// The URL's text for `path` appended to a base, or `nil` when the path has a `.` or `..`
    /// segment as written (see the type's rules).
    private static func build(
        base: UnsafeBufferPointer<UInt8>, parts: BaseParts, path: UnsafeBufferPointer<UInt8>
    ) -> Built? {
        var pathEnd = 0
        while pathEnd < path.count, path[pathEnd] != question { pathEnd += 1 }
        var pathStart = 0
        while pathStart < pathEnd, path[pathStart] == slash { pathStart += 1 }
        let pathPart = UnsafeBufferPointer(rebasing: path[pathStart..<pathEnd])
        let pathQuery = UnsafeBufferPointer(rebasing: path[min(pathEnd + 1, path.count)...])
        var hasPercent = false
        var hasDot = false
        for byte in pathPart {
            if byte == UInt8(ascii: "%") { hasPercent = true } else if byte == UInt8(ascii: ".") { hasDot = true }
        }
        if hasPercent || hasDot, hasDotSegment(pathPart) { return nil }

        // Escaping at most triples a byte.
        let capacity =
            parts.end + 1 + 3 * pathPart.count + 1 + parts.query.count + 1 + 3 * pathQuery.count
            + parts.fragment.count
        let text = String(unsafeUninitializedCapacity: capacity) { out in
            var writer = ByteWriter(out)
            writer.append(UnsafeBufferPointer(rebasing: base[..<parts.end]))
            if !pathPart.isEmpty {
                writer.dropTrailing(slash)
                writer.append(slash)
                writer.appendEscaping(pathPart) { PercentEncoding.isPathCharacter($0) || $0 == slash }
            }
            if parts.query.count > 0 || !pathQuery.isEmpty {
                writer.append(question)
                writer.append(UnsafeBufferPointer(rebasing: base[parts.query]))
                if parts.query.count > 0, !pathQuery.isEmpty { writer.append(UInt8(ascii: "&")) }
                writer.appendEscaping(pathQuery) {
                    PercentEncoding.isPathCharacter($0) || $0 == slash || $0 == question
                }
            }
            writer.append(UnsafeBufferPointer(rebasing: base[parts.fragment]))
            return writer.count
        }
        return Built(text: text, pathHasPercent: hasPercent)
    }

    /// Checks that a base URL (its `absoluteString`) has a scheme and, for http and https, a host.
    ///
    /// Read off the text the URL was parsed from, rather than through `URL.scheme` and `URL.host`,
    /// which parse it again (5% of a stubbed request's time). The rules are RFC 3986's, as
    /// Foundation's: the scheme is what precedes the first `:` when it is a valid scheme; the host
    /// is the authority after `//` without user info and port.
    static func validate(_ absolute: String) throws(CourierError) {
        var absolute = absolute
        try absolute.withUTF8 { BaseParts($0) }.check(absolute)
    }

    enum BaseURLProblem {
        case noScheme, noHost
    }

    private static func baseURLProblem(_ bytes: UnsafeBufferPointer<UInt8>) -> BaseURLProblem? {
        guard let colon = schemeEnd(bytes) else { return .noScheme }
        // Only http and https (in any case) need a host.
        let scheme = UnsafeBufferPointer(rebasing: bytes[..<colon])
        guard
            ASCII.hasPrefix(scheme, lowercase: "http")
                && (colon == 4 || colon == 5 && ASCII.hasPrefix(scheme, lowercase: "https"))
        else { return nil }
        return hasHost(bytes, schemeEnd: colon) ? nil : .noHost
    }

    /// The offset of the `:` that ends the URL's scheme, `nil` without a valid scheme: ALPHA
    /// *( ALPHA / DIGIT / "+" / "-" / "." ), then ":" (RFC 3986, as Foundation reads it).
    static func schemeEnd(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var colon = 0
        while colon < bytes.count, bytes[colon] != UInt8(ascii: ":") {
            let byte = bytes[colon]
            let other =
                ASCII.isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".")
            guard ASCII.isLetter(byte) || (colon > 0 && other) else { return nil }
            colon += 1
        }
        guard colon > 0, colon < bytes.count else { return nil }
        return colon
    }

    /// Whether the URL has a host that is not empty: the authority after `//`, without user info
    /// (up to its last `@`) and port; an IP literal has something inside its brackets.
    static func hasHost(_ bytes: UnsafeBufferPointer<UInt8>, schemeEnd colon: Int) -> Bool {
        var start = colon + 1
        guard start + 1 < bytes.count, bytes[start] == slash, bytes[start + 1] == slash else { return false }
        start += 2
        // One pass over the authority (issue 29: it was three, at about 250 instructions a check,
        // made up to three times a request): where it ends, its last `@`, and the first `:` after
        // that (a port's).
        var end = start
        var host = start
        var colon = -1
        while end < bytes.count {
            let byte = bytes[end]
            if byte == slash || byte == question || byte == hash { break }
            if byte == UInt8(ascii: "@") {
                host = end + 1
                colon = -1
            } else if byte == UInt8(ascii: ":"), colon < 0 {
                colon = end
            }
            end += 1
        }
        if host < end, bytes[host] == UInt8(ascii: "[") { return end - host > 2 }
        let hostEnd = colon < 0 ? end : colon
        return hostEnd > host
    }

    /// Whether a segment of `path` is `.` or `..`, as written or once percent-decoded, with `/` or
    /// `\\` as separators (some servers treat a backslash as a slash). Only paths with a `.` pay for
    /// the full check.
    static func containsDotSegment(_ path: Substring) -> Bool {
        let hasPercent = path.utf8.contains(UInt8(ascii: "%"))
        guard hasPercent || path.utf8.contains(UInt8(ascii: ".")) else { return false }
        if hasDotSegment(path.utf8) { return true }
        guard hasPercent else { return false }
        return hasDotSegment(PercentEncoding.lenientlyDecoded(path.utf8))
    }

    /// Whether a `/`- or `\`-separated segment of `bytes` is `.` or `..`.
    private static func hasDotSegment(_ bytes: some Sequence<UInt8>) -> Bool {
        var length = 0
        var onlyDots = true
        for byte in bytes {
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "\\") {
                if length > 0, length <= 2, onlyDots { return true }
                length = 0
                onlyDots = true
            } else {
                length += 1
                if byte != UInt8(ascii: ".") { onlyDots = false }
            }
        }
        return length > 0 && length <= 2 && onlyDots
    }

    /// The offsets of the first `#`, and of the first `?` before it.
    private static func delimiters(_ bytes: UnsafeBufferPointer<UInt8>) -> (question: Int?, hash: Int?) {
        var question: Int?
        for offset in bytes.indices {
            switch bytes[offset] {
            case hash: return (question, offset)
            case URLBuilder.question where question == nil: question = offset
            default: continue
            }
        }
        return (question, nil)
    }
}

/// Writes bytes into a buffer made large enough beforehand (a URL's text: see `URLBuilder`).
private struct ByteWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    mutating func append(_ byte: UInt8) {
        buffer[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty, let target = buffer.baseAddress else { return }
        (target + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Removes trailing `byte`s already written.
    mutating func dropTrailing(_ byte: UInt8) {
        while count > 0, buffer[count - 1] == byte { count -= 1 }
    }

    /// Appends `bytes`, percent-encoding each that `allowed` refuses, but keeping `%XX` escapes.
    mutating func appendEscaping(_ bytes: UnsafeBufferPointer<UInt8>, allowed: (UInt8) -> Bool) {
        for index in bytes.indices {
            let byte = bytes[index]
            if allowed(byte) || (byte == UInt8(ascii: "%") && PercentEncoding.isEscape(bytes, at: index)) {
                append(byte)
            } else {
                append(UInt8(ascii: "%"))
                append(PercentEncoding.hexDigit(byte >> 4))
                append(PercentEncoding.hexDigit(byte & 0x0F))
            }
        }
    }
}
