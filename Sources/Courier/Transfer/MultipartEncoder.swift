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
/// §4.2, as browsers do); other characters, non-ASCII included, are sent as UTF-8.
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
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
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
    static func encodeInMemory(_ form: MultipartFormData) throws(CourierError) -> Data {
        var body = Data()
        do {
            try write(form) { body.append($0) }
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
    static func encodeToFile(_ form: MultipartFormData, in directory: URL) async throws -> URL {
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
                    try write(form) { chunk in
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
    static func encodeInMemoryOffPool(_ form: MultipartFormData) async throws -> Data {
        try await BlockingIO.run { isCancelled in
            var body = Data()
            try write(form) { chunk in
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

    /// Produces the body in order, chunk by chunk.
    static func write(_ form: MultipartFormData, to sink: (Data) throws -> Void) throws {
        try validate(form)
        for part in form.parts {
            try sink(headers(for: part, boundary: form.boundary))
            switch part.content {
            case .data(let data):
                try sink(data)
            case .file(let url):
                try copyFile(url, to: sink)
            case .stream(let source, let length):
                try copyStream(source, length: length, name: part.name, to: sink)
            }
            try sink(lineBreak)
        }
        try sink(closing(form.boundary))
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
