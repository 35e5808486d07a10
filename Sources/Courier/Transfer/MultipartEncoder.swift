import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Builds `multipart/form-data` bodies: in memory below the form's threshold, streamed to a file
/// above it.
///
/// Layout (RFC 7578 / RFC 2046): for each part `--boundary CRLF headers CRLF CRLF content CRLF`,
/// then `--boundary-- CRLF`. In `name` and `filename`, `"`, CR and LF are percent-encoded (RFC 7578
/// §4.2, as browsers do), and so are `\` and the other control characters; other characters,
/// non-ASCII included, are sent as UTF-8.
enum MultipartEncoder {
    /// Size of the chunks files and streams are copied in.
    static let chunkSize = 1 << 20

    static func validate(_ form: MultipartFormData) throws(CourierError) {
        guard !form.parts.isEmpty else { throw .multipartEncoding(MultipartFailure.noParts) }
        let boundary = form.boundary
        let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ".utf8)
        guard (1...70).contains(boundary.utf8.count), boundary.utf8.allSatisfy(allowed.contains),
            boundary.last != " "
        else {
            throw .multipartEncoding(MultipartFailure.invalidBoundary(boundary))
        }
        let delimiter = Data("--\(boundary)".utf8)
        for part in form.parts {
            if case .data(let data) = part.content, data.range(of: delimiter) != nil {
                throw .multipartEncoding(MultipartFailure.invalidBoundary(boundary))
            }
        }
    }

    /// The `Content-Type` value, quoting the boundary when it has characters that need it.
    static func contentType(_ form: MultipartFormData) -> String {
        let needsQuotes = form.boundary.contains { "()<>@,;:\\\"/[]?= ".contains($0) }
        return "multipart/form-data; boundary=" + (needsQuotes ? "\"\(form.boundary)\"" : form.boundary)
    }

    static func escape(_ value: String) -> String {
        var result = ""
        for scalar in value.unicodeScalars {
            switch scalar.value {
            // `"`, CR and LF as browsers write them; `\\` too, and every other control character:
            // a parser that reads `\\"` as an escaped quote (RFC 9110's quoted-pair: Go's, Python's)
            // would otherwise read another name or file name than one that does not, and a NUL
            // cuts a name short in C (found by review).
            case 0x22, 0x5C, 0x00..<0x20, 0x7F:
                result += "%" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16, uppercase: true)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func headers(for part: MultipartFormData.Part, boundary: String) -> Data {
        var text = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(escape(part.name))\""
        if let fileName = part.fileName {
            text += "; filename=\"\(escape(fileName))\""
        }
        text += "\r\n"
        if let mimeType = part.mimeType {
            // By scalar: CR LF is one `Character`, which a filter of `Character`s keeps (and with it
            // the header lines a careless value would add). Every control character goes.
            var value = ""
            value.unicodeScalars.append(
                contentsOf: mimeType.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
            text += "Content-Type: \(value)\r\n"
        }
        text += "\r\n"
        return Data(text.utf8)
    }

    static func closing(_ boundary: String) -> Data { Data("--\(boundary)--\r\n".utf8) }
    static let lineBreak = Data("\r\n".utf8)

    static func contentLength(of part: MultipartFormData.Part) throws(CourierError) -> UInt64 {
        switch part.content {
        case .data(let data):
            return UInt64(data.count)
        case .file(let url):
            return try fileSize(url)
        case .stream(_, let length):
            return length
        }
    }

    static func fileSize(_ url: URL) throws(CourierError) -> UInt64 {
        do {
            return try FileBody.regularFileSize(url)
        } catch {
            throw .multipartEncoding(MultipartFailure.unreadableFile(url, reason: error.description))
        }
    }

    /// The exact size of the encoded body.
    ///
    /// - Throws: ``MultipartFailure/tooLong(name:)`` when the parts' lengths (a stream part's is
    ///   the caller's word) add up to more than `Int64.max` bytes, which no `Content-Length` can say.
    static func totalLength(_ form: MultipartFormData) throws(CourierError) -> UInt64 {
        var total = UInt64(closing(form.boundary).count)
        for part in form.parts {
            let own = UInt64(headers(for: part, boundary: form.boundary).count) + UInt64(lineBreak.count)
            let (withContent, overflow) = try contentLength(of: part).addingReportingOverflow(own)
            let (sum, overflowTotal) = total.addingReportingOverflow(withContent)
            guard !overflow, !overflowTotal, sum <= UInt64(Int64.max) else {
                throw .multipartEncoding(MultipartFailure.tooLong(name: part.name))
            }
            total = sum
        }
        return total
    }

    /// The body in memory. For bodies at or under the form's threshold.
    static func encodeInMemory(_ form: MultipartFormData, length: UInt64) throws(CourierError) -> Data {
        var body = Data()
        do {
            try write(form, length: length) { body.append($0) }
        } catch let error as CourierError {
            throw error
        } catch {
            throw .multipartEncoding(MultipartFailure.temporaryFile(reason: "\(error)"))
        }
        return body
    }

    /// Streams the body into a new file, off the cooperative thread pool, stopping when the task is
    /// cancelled. The file is removed if anything goes wrong, also when a part blocks (a stream
    /// that never ends): the caller is answered at once and the file removed by whichever side
    /// gets there last.
    static func encodeToFile(_ form: MultipartFormData, length: UInt64, in directory: URL) async throws -> URL {
        let url = directory.appendingPathComponent("courier-multipart-\(UUID().uuidString).body")
        do {
            try await BlockingIO.run { isCancelled in
                // Readable by its owner only: the form (passwords, tokens, files) waits in the
                // shared temporary directory while it is sent (found by review).
                let descriptor = open(
                    url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FileIO.privateFileMode)
                guard descriptor >= 0 else {
                    throw CourierError.multipartEncoding(
                        MultipartFailure.temporaryFile(reason: "cannot create \(url.path)"))
                }
                do {
                    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                    defer { try? handle.close() }
                    try write(form, length: length) { chunk in
                        if isCancelled() { throw CancellationError() }
                        try handle.write(contentsOf: chunk)
                    }
                    if isCancelled() { throw CancellationError() }
                } catch {
                    try? FileManager.default.removeItem(at: url)
                    throw error
                }
            }
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
        return url
    }

    /// The body in memory, built off the cooperative thread pool (file and stream parts are read
    /// with blocking calls).
    static func encodeInMemoryOffPool(_ form: MultipartFormData, length: UInt64) async throws -> Data {
        try await BlockingIO.run { isCancelled in
            var body = Data()
            body.reserveCapacity(Int(clamping: length))
            try write(form, length: length) { chunk in
                if isCancelled() { throw CancellationError() }
                body.append(chunk)
            }
            return body
        }
    }

    /// Whether `Endpoint.urlRequest()` builds the body (see `MultipartFormData`): data parts up to
    /// the threshold; data and regular-file parts up to `maxBodyReadInRequest` too (a short,
    /// bounded read); never a stream, which may block or be read only once.
    static func isBuiltInRequest(_ form: MultipartFormData, length: UInt64) -> Bool {
        guard length <= UInt64(max(0, form.memoryThreshold)) else { return false }
        if isInMemory(form) { return true }
        let hasStream = form.parts.contains {
            if case .stream = $0.content { return true }
            return false
        }
        return !hasStream && length <= UInt64(MultipartFormData.maxBodyReadInRequest)
    }

    /// Whether every part is in memory, so the body can be built without reading anything.
    static func isInMemory(_ form: MultipartFormData) -> Bool {
        form.parts.allSatisfy {
            if case .data = $0.content { return true }
            return false
        }
    }

    /// Produces the body in order, chunk by chunk: exactly `length` bytes (``totalLength(_:)``,
    /// measured before), or ``MultipartFailure/sizeChanged(expected:actual:)``.
    ///
    /// A file that grew since it was measured is read no further than one chunk past `length`:
    /// a body built in memory stays within the size it was allowed for (found by review: each
    /// file was measured again here and read whole). A form whose boundary the caller chose has
    /// its file and stream parts searched for the boundary as they are copied; a random
    /// boundary cannot be in them.
    static func write(_ form: MultipartFormData, length: UInt64, to sink: (Data) throws -> Void) throws {
        try validate(form)
        var written: UInt64 = 0
        func emit(_ chunk: Data) throws {
            written += UInt64(chunk.count)
            guard written <= length else {
                throw CourierError.multipartEncoding(MultipartFailure.sizeChanged(expected: length, actual: written))
            }
            try sink(chunk)
        }
        // RFC 2046's delimiter: CRLF, `--` and the boundary. A part's content follows the CRLF
        // that ends its headers, so it is searched as if after one. `--x-color` in a style sheet
        // under the boundary `x` is not a delimiter, and is sent.
        let delimiter = form.boundaryIsChosen ? Array("\r\n--\(form.boundary)".utf8) : nil
        for part in form.parts {
            try emit(headers(for: part, boundary: form.boundary))
            var scan = delimiter.map { DelimiterScan($0) }
            func content(_ chunk: Data) throws {
                if scan?.finds(in: chunk) == true {
                    throw CourierError.multipartEncoding(MultipartFailure.invalidBoundary(form.boundary))
                }
                try emit(chunk)
            }
            switch part.content {
            case .data(let data):
                try emit(data)
            case .file(let url):
                try copyFile(url, to: content)
            case .stream(let source, let partLength):
                try copyStream(source, length: partLength, name: part.name, to: content)
            }
            try emit(lineBreak)
        }
        try emit(closing(form.boundary))
        guard written == length else {
            throw CourierError.multipartEncoding(MultipartFailure.sizeChanged(expected: length, actual: written))
        }
    }

    private static func copyFile(_ url: URL, to sink: (Data) throws -> Void) throws {
        let expected = try fileSize(url)
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw CourierError.multipartEncoding(
                MultipartFailure.unreadableFile(url, reason: error.localizedDescription))
        }
        defer { try? handle.close() }
        var copied: UInt64 = 0
        // Never more than the size announced in Content-Length: a growing file stops there.
        while copied <= expected, let chunk = try handle.read(upToCount: chunkSize), !chunk.isEmpty {
            copied += UInt64(chunk.count)
            guard copied <= expected else { break }
            try sink(chunk)
        }
        guard copied == expected else {
            throw CourierError.multipartEncoding(
                MultipartFailure.unreadableFile(url, reason: "its size changed while it was read"))
        }
    }

    private static func copyStream(
        _ source: MultipartFormData.StreamSource, length: UInt64, name: String, to sink: (Data) throws -> Void
    ) throws {
        guard let stream = source.make() else {
            throw CourierError.multipartEncoding(
                MultipartFailure.streamLengthMismatch(name: name, expected: length, actual: 0))
        }
        stream.open()
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var copied: UInt64 = 0
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count < 0 {
                throw CourierError.multipartEncoding(
                    MultipartFailure.streamLengthMismatch(name: name, expected: length, actual: copied))
            }
            if count == 0 { break }
            copied += UInt64(count)
            if copied > length { break }
            try sink(Data(buffer[0..<count]))
        }
        guard copied == length else {
            throw CourierError.multipartEncoding(
                MultipartFailure.streamLengthMismatch(name: name, expected: length, actual: copied))
        }
    }
}

/// Finds a form's delimiter (CRLF, `--` and its boundary) in a part's bytes as they are copied,
/// across the chunks they come in: each chunk is searched, and so is its start joined to the end
/// of the chunk before (at first, to the CRLF that ends the part's headers).
struct DelimiterScan {
    let delimiter: [UInt8]
    /// The last `delimiter.count - 1` bytes seen.
    private var tail: [UInt8]

    init(_ delimiter: [UInt8], after start: [UInt8] = Array("\r\n".utf8)) {
        self.delimiter = delimiter
        tail = Array(start.suffix(max(0, delimiter.count - 1)))
    }

    mutating func finds(in chunk: Data) -> Bool {
        let keep = delimiter.count - 1
        if !tail.isEmpty {
            let junction = tail + chunk.prefix(keep)
            if Self.search(junction, for: delimiter) { return true }
        }
        if Self.search(chunk, for: delimiter) { return true }
        tail = Array((tail + chunk.suffix(keep)).suffix(keep))
        return false
    }

    private static func search(_ bytes: some ContiguousBytes, for needle: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { haystack in
            needle.withUnsafeBytes { needle in
                guard let first = needle.first, haystack.count >= needle.count, var start = haystack.baseAddress,
                    let needleBase = needle.baseAddress
                else { return false }
                // Each place the first byte is found (memchr, fast), then the rest compared
                // (memmem is not in Glibc's module).
                let last = haystack.baseAddress! + (haystack.count - needle.count)
                while start <= last {
                    guard let found = memchr(start, Int32(first), last - start + 1) else { return false }
                    if memcmp(found, needleBase, needle.count) == 0 { return true }
                    start = UnsafeRawPointer(found) + 1
                }
                return false
            }
        }
    }
}
