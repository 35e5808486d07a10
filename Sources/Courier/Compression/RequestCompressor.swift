import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The compressed uploads stage of the pipeline (``RequestCompression``): runs once per call, after
/// the request mapping and before plugins' `prepare`, on the caller's task (never on the provider
/// actor). A body in memory up to ``inlineLimit`` is compressed right there (about a
/// millisecond of one core); anything larger, and every file or multipart body, on a thread of its own
/// (``BlockingIO``), so the cooperative pool is never held for long.
enum RequestCompressor {
    /// The largest in-memory body compressed on the caller's task.
    static let inlineLimit = 16 << 10
    /// The bytes per DEFLATE block, and per read of a file body: memory while compressing is a
    /// few times this, whatever the body's size.
    static let chunkSize = 65_535

    /// What the call sends once compressed.
    struct Prepared {
        var request: URLRequest
        var endpoint: Endpoint
        /// The compressed body's temporary file, which the call removes when it ends.
        var file: URL?
    }

    /// Compresses `request`'s body as `compression` says (nothing when it is `nil`, or the body
    /// is shorter than its minimum). A file or multipart body (from `endpoint`'s task) becomes a
    /// temporary file, and the endpoint's task an upload of that file.
    /// - Throws: ``CourierError/requestCompression(_:)``; ``CourierError/multipartEncoding(_:)``
    ///   for a form that cannot be built; ``CourierError/cancelled``.
    static func prepare(
        _ request: URLRequest, endpoint: Endpoint, compression: RequestCompression?
    ) async throws(CourierError) -> Prepared {
        let unchanged = Prepared(request: request, endpoint: endpoint)
        guard let compression else { return unchanged }
        let source: Source
        switch endpoint.task {
        case .uploadFile(let url, _):
            source = .file(url)
        case .uploadMultipart(let form, _) where request.httpBody == nil && request.httpBodyStream == nil:
            source = .multipart(form)
        default:
            if request.httpBodyStream != nil {
                source = .stream
            } else if let body = request.httpBody, !body.isEmpty {
                source = .memory(body)
            } else {
                return unchanged
            }
        }
        // Refused whatever the body's size, so a small body in a test does not hide it.
        // `identity` (or an empty value) says the body is not encoded: it is replaced (found by
        // review; `ContentCoding` reads the header the same way for responses).
        if let coding = request.value(forHTTPHeaderField: "Content-Encoding"), ContentCoding.isEncoded(coding) {
            throw .requestCompression(.alreadyEncoded(coding))
        }
        let length: UInt64
        switch source {
        case .stream:
            throw .requestCompression(.bodyStream)
        case .memory(let body):
            length = UInt64(body.count)
        case .file(let url):
            do {
                length = try FileBody.regularFileSize(url)
            } catch {
                throw .requestCompression(.io(error))
            }
        case .multipart(let form):
            length = try MultipartEncoder.totalLength(form)
        }
        guard compression.applies(toLength: length) else { return unchanged }

        var prepared = unchanged
        prepared.request.setValue(compression.coding.rawValue, forHTTPHeaderField: "Content-Encoding")
        let compressedLength: UInt64
        if case .memory(let body) = source {
            let compressed: Data
            if body.count <= inlineLimit {
                compressed = try Self.compressOnTask(body, coding: compression.coding)
            } else {
                compressed = try await offPool { isCancelled in
                    guard let compressed = Self.compress(body, coding: compression.coding, isCancelled: isCancelled)
                    else { throw CancellationError() }
                    return compressed
                }
            }
            prepared.request.httpBody = compressed
            compressedLength = UInt64(compressed.count)
        } else {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "courier-compressed-\(UUID().uuidString).\(compression.coding.rawValue)")
            do {
                compressedLength = try await offPool { isCancelled in
                    try Self.compress(
                        source, length: length, into: file, coding: compression.coding, isCancelled: isCancelled)
                }
            } catch {
                // Cancelled just as the work ended: the work's file is complete and nobody else's.
                // (Cancelled earlier, the work sees it and removes the file itself.)
                remove(file)
                throw CourierError(error)
            }
            prepared.file = file
            prepared.request.httpBody = nil
            // Query parameters are in the request's URL already.
            prepared.endpoint = endpoint.replacing(task: .uploadFile(file))
        }
        prepared.request.setValue(String(compressedLength), forHTTPHeaderField: "Content-Length")
        return prepared
    }

    /// Removes a compressed body's temporary file (Courier made it).
    static func remove(_ file: URL?) {
        if let file { try? FileManager.default.removeItem(at: file) }
    }

    /// Where the body comes from.
    private enum Source: Sendable {
        case memory(Data)
        case file(URL)
        case multipart(MultipartFormData)
        case stream
    }

    /// A small body, compressed on the caller's task (cancellation checked before).
    private static func compressOnTask(
        _ body: Data, coding: RequestCompression.Coding
    ) throws(CourierError) -> Data {
        if Task.isCancelled { throw .cancelled }
        return compress(body, coding: coding, isCancelled: { false }) ?? Data()
    }

    /// `body`, compressed in blocks of ``chunkSize``; `nil` when `isCancelled` says so between
    /// blocks.
    static func compress(_ body: Data, coding: RequestCompression.Coding, isCancelled: () -> Bool) -> Data? {
        var compressor = BodyCompressor(coding)
        var output = Data()
        var start = body.startIndex
        while start < body.endIndex {
            if isCancelled() { return nil }
            let end = body.index(start, offsetBy: chunkSize, limitedBy: body.endIndex) ?? body.endIndex
            output.append(contentsOf: compressor.compress([UInt8](body[start..<end])))
            start = end
        }
        output.append(contentsOf: compressor.finish())
        return output
    }

    /// Streams a file or multipart body of `length` bytes through the compressor into a new file
    /// at `file` (owner-only, never through a link); returns the compressed size. Blocking: runs
    /// through ``BlockingIO``. The file is removed if anything goes wrong, cancellation included.
    private static func compress(
        _ source: Source, length: UInt64, into file: URL, coding: RequestCompression.Coding,
        isCancelled: () -> Bool
    ) throws -> UInt64 {
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CourierError.requestCompression(.io(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)))
        }
        do {
            defer { close(descriptor) }
            var writer = CompressingWriter(coding: coding, chunkSize: chunkSize)
            func emit(_ bytes: [UInt8]) throws {
                if isCancelled() { throw CancellationError() }
                try writeAll(bytes, to: descriptor)
            }
            switch source {
            case .file(let url):
                try copyFile(url, length: length, to: &writer, sink: emit)
            case .multipart(let form):
                try MultipartEncoder.write(form, length: length) { try writer.write($0, to: emit) }
                if writer.consumed != length {
                    throw CourierError.multipartEncoding(
                        MultipartFailure.sizeChanged(expected: length, actual: writer.consumed))
                }
            case .memory, .stream:
                break
            }
            try writer.finish(to: emit)
            if isCancelled() { throw CancellationError() }
            return writer.produced
        } catch {
            unlink(file.path)
            throw error
        }
    }

    /// Reads the regular file at `url` in chunks into `writer`, refusing one whose size is no
    /// longer `length`.
    private static func copyFile(
        _ url: URL, length: UInt64, to writer: inout CompressingWriter, sink: ([UInt8]) throws -> Void
    ) throws {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw CourierError.requestCompression(.io(FileBodyFailure.unreadable(url, reason: "\(error)")))
        }
        defer { try? handle.close() }
        // Never more than the size measured: a growing file stops there.
        while writer.consumed <= length, let chunk = try handle.read(upToCount: chunkSize), !chunk.isEmpty {
            try writer.write(chunk, to: sink)
        }
        guard writer.consumed == length else {
            throw CourierError.requestCompression(
                .io(FileBodyFailure.sizeChanged(url, expected: length, actual: writer.consumed)))
        }
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) throws {
        try bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw CourierError.requestCompression(.io(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)))
                }
                offset += written
            }
        }
    }

    /// Runs blocking compression on a thread of its own; errors become ``CourierError``s.
    private static func offPool<T: Sendable>(
        _ work: @escaping @Sendable (_ isCancelled: @Sendable () -> Bool) throws -> T
    ) async throws(CourierError) -> T {
        do {
            return try await BlockingIO.run { isCancelled in try work(isCancelled) }
        } catch let error as CourierError {
            throw error
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .requestCompression(.io(error))
        }
    }
}
