import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOPosix

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One answered request: the head is here, the body is still on the wire. It is read once, in
/// one of three ways: into memory, into a file, or handed over as a stream.
struct Exchange: Sendable {
    let transfer: Transfer
    let response: HTTPClientResponse
    /// The head, without a body (its `HTTPURLResponse` built only if someone reads it).
    let head: Response
    let redirects: Int
    let responseStart: Duration?
    /// The request body's size, as sent (measured once, when the request was made: reading
    /// `URLRequest.httpBody` copies it on Linux, and a file's size is a system call).
    let bytesSent: Int64
    /// The head's `Content-Encoding`, looked up once (a lookup is a case-insensitive scan).
    /// Both are read from `head`, with the rules every transport shares (repeated fields joined,
    /// the length digits only), not from AsyncHTTPClient's first field of the name.
    let contentEncoding: String?
    /// `Content-Length`, or -1.
    let contentLength: Int64
    /// The watch of a body sent in parts, told of every piece of the answer: after an early
    /// answer the body may still be going out, and AsyncHTTPClient's `read` timeout is not
    /// running until it is sent.
    let watch: SendWatch?

    init(
        transfer: Transfer, response: HTTPClientResponse, head: Response, redirects: Int,
        responseStart: Duration?, bytesSent: Int64, watch: SendWatch? = nil
    ) {
        self.watch = watch
        self.transfer = transfer
        self.response = response
        self.head = head
        self.redirects = redirects
        self.responseStart = responseStart
        self.bytesSent = bytesSent
        contentEncoding = head.value(forHTTPHeaderField: "Content-Encoding")
        contentLength = head.expectedContentLength
    }

    private func metrics(received: Int64) -> TransferMetrics {
        TransferMetrics(
            bytesSent: bytesSent, bytesReceived: received, redirects: redirects, responseStart: responseStart)
    }

    private func response(data: Data, fileURL: URL? = nil, received: Int64) -> Response {
        head.withBody(data, fileURL: fileURL, transferMetrics: metrics(received: received))
    }

    /// The decoded body's length when the head says it: `Content-Length`, unless the body is
    /// encoded.
    private var expectedLength: Int64? {
        ResponseBodyLimit.expectedLength(contentLength: contentLength, contentEncoding: contentEncoding)
    }

    /// Reports that the answer's head arrived, with the body's length as progress announces it
    /// (``Courier/ResponseBodyLimit/expectedLength(of:method:)``). Called once, for the answer
    /// alone: a redirect's head and body are not reported.
    func reportStart() {
        guard let progress = transfer.progress else { return }
        progress(
            .responseStarted(
                expectedLength: ResponseBodyLimit.expectedLength(of: head, method: transfer.request.httpMethod)))
    }

    /// One piece of the body as `read(limit:_:)` hands it over: the bytes as they came off the
    /// wire (no copy made), or as the inflater decoded them.
    enum Piece {
        case wire(ByteBuffer)
        case decoded(Data)

        var isEmpty: Bool {
            switch self {
            case .wire(let buffer): buffer.readableBytes == 0
            case .decoded(let data): data.isEmpty
            }
        }

        /// The bytes as `Data` (a copy, for wire bytes).
        var data: Data {
            switch self {
            case .wire(let buffer): buffer.withUnsafeReadableBytes { Data($0) }
            case .decoded(let data): data
            }
        }

        /// Appends the bytes to `data`, with one copy and nothing in between.
        func append(to data: inout Data) {
            switch self {
            case .wire(let buffer):
                buffer.withUnsafeReadableBytes { bytes in
                    guard let base = bytes.baseAddress else { return }
                    data.append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
                }
            case .decoded(let decoded): data.append(decoded)
            }
        }
    }

    /// The compressed bytes decoded at once: at most about 1,000 times that decoded (DEFLATE's
    /// largest ratio) is held before it is handed on, 4 MiB.
    static let inflatedSlice = 4 << 10

    /// Reads the body, decoding it and counting it against `limit`; `piece` gets the bytes of each
    /// network chunk, or, for a compressed body, the decoded bytes of each slice of it
    /// (``inflatedSlice``). Stops when `piece` returns `false`.
    private nonisolated(nonsending) func read(
        limit: ResponseBodyLimit, _ piece: nonisolated(nonsending) (Piece, _ received: Int64) async throws -> Bool
    ) async throws -> Int64 {
        var limit = limit
        let inflater = Inflater(contentEncoding: contentEncoding)
        var received: Int64 = 0
        var wire: Int64 = 0
        do {
            chunks: for try await buffer in response.body {
                watch?.answered()
                guard let inflater else {
                    received += Int64(buffer.readableBytes)
                    if let crossed = limit.crossed(by: received, head: head) {
                        throw CourierError.limitExceeded(crossed)
                    }
                    guard try await piece(.wire(buffer), received) else { return received }
                    if buffer.readableBytes > 0 { transfer.progress?(.received(bytes: received)) }
                    continue
                }
                // Decoded a slice of the chunk at a time, each slice's bytes handed on before the
                // next is decoded: one network read of 64 KiB may inflate to 64 MiB or more, which
                // gathered whole went past the memory a download or a stream is held to (a
                // stream's buffer takes a chunk whole when it is empty). Found by review.
                let count = buffer.readableBytes
                var offset = 0
                repeat {
                    let end = min(offset + Self.inflatedSlice, count)
                    var data = Data()
                    try buffer.withUnsafeReadableBytes { bytes in
                        try inflater.decode(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) { part in
                            received += Int64(part.count)
                            if let crossed = limit.crossed(by: received, head: head) {
                                throw CourierError.limitExceeded(crossed)
                            }
                            data.append(part)
                        }
                    }
                    // Held on the wire too, once the slice is decoded (what it decodes to is not
                    // overhead): a body of empty deflate blocks decodes to nothing.
                    if let crossed = limit.crossed(onTheWire: wire + Int64(end), decoded: received) {
                        throw CourierError.limitExceeded(crossed)
                    }
                    offset = end
                    guard try await piece(.decoded(data), received) else { return received }
                    if !data.isEmpty { transfer.progress?(.received(bytes: received)) }
                    // Bytes after the compressed body are ignored, so they are not read: they
                    // decode to nothing, and a server could send them without end under every limit.
                    if inflater.isPastTheEnd { break chunks }
                } while offset < count
                wire += Int64(count)
            }
        } catch {
            throw ErrorMapping.normalize(error)
        }
        // A compressed body that stops before its end is cut short. One that never started is
        // none: an answer to `HEAD`, a 204 or a 304 may name the encoding (and the length) of a
        // body it does not have.
        if let inflater, inflater.started, !inflater.ended {
            throw URLError(.cannotDecodeContentData)
        }
        return received
    }

    /// The whole body in memory. A body that came in one network chunk (most small ones) is
    /// copied once, at the end, straight from AsyncHTTPClient's buffer; a longer one is gathered
    /// in `Data` reserved for its announced length.
    nonisolated(nonsending) func collect() async throws -> Response {
        let limit = ResponseBodyLimit(for: transfer)
        if let crossed = limit.announcedCrossing(head) { throw CourierError.limitExceeded(crossed) }
        var data = Data()
        var single: ByteBuffer?
        let received = try await read(limit: limit) { piece, _ in
            if case .wire(let buffer) = piece, single == nil, data.isEmpty {
                single = buffer
                return true
            }
            if let first = single {
                // At most the default limit's worth: with a limit raised (or `.max`), an
                // announced size is the server's word, and reserving 2^62 bytes traps.
                if let expectedLength, expectedLength > 0 {
                    data.reserveCapacity(Int(min(expectedLength, Limits.defaultMaxResponseBytes)))
                }
                Piece.wire(first).append(to: &data)
                single = nil
            }
            piece.append(to: &data)
            return true
        }
        if let single { data = Piece.wire(single).data }
        return response(data: data, received: received)
    }

    /// The body written to `url` (created, or truncated), the socket read no faster than the disk
    /// writes. The file is removed if the transfer fails.
    nonisolated(nonsending) func download(to url: URL) async throws -> Response {
        let limit = ResponseBodyLimit(for: transfer)
        if let crossed = limit.announcedCrossing(head) { throw CourierError.limitExceeded(crossed) }
        let file = try await DestinationFile.create(url)
        do {
            let received = try await read(limit: limit) { piece, _ in
                if !piece.isEmpty { try await file.write(piece.data) }
                return true
            }
            return response(data: Data(), fileURL: url, received: received)
        } catch {
            // Durable downloads (27): a download the provider may resume keeps every byte written.
            if transfer.downloadHeadArrived == nil { await file.remove() }
            throw error
        }
    }

    /// The body as a ``ResponseBody``, read by a task of its own, which its reader going away
    /// cancels (closing the connection).
    func stream() -> StreamedResponse {
        let (body, writer) = ResponseBody.makeStream(limits: transfer.limits)
        let pump = Task { [self] in
            let pumping: @Sendable () async throws -> Void = {
                _ = try await read(limit: ResponseBodyLimit(streaming: transfer.limits)) { piece, _ in
                    piece.isEmpty || writer.write(piece.data)
                }
            }
            do {
                // A body still going out after an early answer is watched while this one is read
                // (AsyncHTTPClient's `read` timeout waits for the request's end).
                if let watch { try await watch.guarding(pumping) } else { try await pumping() }
                writer.finish()
            } catch {
                writer.finish(throwing: error)
            }
        }
        writer.onTermination { pump.cancel() }
        return StreamedResponse(head: response(data: Data(), received: 0), body: body)
    }
}
