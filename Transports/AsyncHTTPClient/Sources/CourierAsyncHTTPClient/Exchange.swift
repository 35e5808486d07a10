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
    /// The head's `Content-Encoding`, looked up once (a lookup is a case-insensitive scan).
    let contentEncoding: String?
    /// `Content-Length`, or -1.
    let contentLength: Int64

    init(
        transfer: Transfer, response: HTTPClientResponse, head: Response, redirects: Int,
        responseStart: Duration?
    ) {
        self.transfer = transfer
        self.response = response
        self.head = head
        self.redirects = redirects
        self.responseStart = responseStart
        contentEncoding = response.headers.first(name: "Content-Encoding")
        contentLength = response.headers.first(name: "Content-Length").flatMap { Int64($0) } ?? -1
    }

    private var bytesSent: Int64 {
        if case .file = transfer.body { return Int64((try? transfer.fileBodySize()) ?? 0) }
        return Int64(transfer.request.httpBody?.count ?? 0)
    }

    private func metrics(received: Int64) -> TransferMetrics {
        TransferMetrics(
            bytesSent: bytesSent, bytesReceived: received, redirects: redirects, responseStart: responseStart)
    }

    private func response(data: Data, fileURL: URL? = nil, received: Int64) -> Response {
        head.withBody(data, fileURL: fileURL, transferMetrics: metrics(received: received))
    }

    /// The body's length as progress reports it: `Content-Length`, unless the body is encoded.
    private var expectedLength: Int64? {
        ResponseBodyLimit.expectedLength(contentLength: contentLength, contentEncoding: contentEncoding)
    }

    /// Reads the body, decoding it and counting it against `limit`; `piece` gets the decoded
    /// bytes of each network chunk. Stops when `piece` returns `false`.
    private func read(
        limit: ResponseBodyLimit, _ piece: (Data, _ received: Int64) async throws -> Bool
    ) async throws -> Int64 {
        var limit = limit
        let inflater = Inflater(contentEncoding: contentEncoding)
        var received: Int64 = 0
        var started = false
        do {
            for try await buffer in response.body {
                var decoded = Data()
                if let inflater {
                    try buffer.withUnsafeReadableBytes { bytes in
                        try inflater.decode(bytes) { part in
                            received += Int64(part.count)
                            if let crossed = limit.crossed(by: received, head: head) {
                                throw CourierError.limitExceeded(crossed)
                            }
                            decoded.append(part)
                        }
                    }
                } else {
                    decoded = buffer.withUnsafeReadableBytes { Data($0) }
                    received += Int64(decoded.count)
                    if let crossed = limit.crossed(by: received, head: head) {
                        throw CourierError.limitExceeded(crossed)
                    }
                }
                if !started, received > 0 {
                    started = true
                    transfer.progress?(.responseStarted(expectedLength: expectedLength))
                }
                guard try await piece(decoded, received) else { return received }
                if !decoded.isEmpty { transfer.progress?(.received(bytes: received)) }
            }
        } catch {
            throw ErrorMapping.normalize(error)
        }
        // A compressed body that stops before its end is cut short.
        if let inflater, !inflater.ended, received > 0 || contentLength != 0 {
            throw URLError(.cannotDecodeContentData)
        }
        return received
    }

    /// The whole body in memory.
    func collect() async throws -> Response {
        let limit = ResponseBodyLimit(for: transfer)
        if let crossed = limit.announcedCrossing(head) { throw CourierError.limitExceeded(crossed) }
        var data = Data()
        // At most the default limit's worth: with a limit raised (or `.max`), an announced size is
        // the server's word, and reserving 2^62 bytes traps.
        if let expectedLength, expectedLength > 0 {
            data.reserveCapacity(Int(min(expectedLength, Limits.defaultMaxResponseBytes)))
        }
        let received = try await read(limit: limit) { piece, _ in
            data.append(piece)
            return true
        }
        return response(data: data, received: received)
    }

    /// The body written to `url` (created, or truncated), the socket read no faster than the disk
    /// writes. The file is removed if the transfer fails.
    func download(to url: URL) async throws -> Response {
        let limit = ResponseBodyLimit(for: transfer)
        if let crossed = limit.announcedCrossing(head) { throw CourierError.limitExceeded(crossed) }
        let file = try await DestinationFile.create(url)
        do {
            let received = try await read(limit: limit) { piece, _ in
                if !piece.isEmpty { try await file.write(piece) }
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
        let pump = Task {
            do {
                _ = try await read(limit: ResponseBodyLimit(streaming: transfer.limits)) { piece, _ in
                    piece.isEmpty || writer.write(piece)
                }
                writer.finish()
            } catch {
                writer.finish(throwing: error)
            }
        }
        writer.onTermination { pump.cancel() }
        return StreamedResponse(head: response(data: Data(), received: 0), body: body)
    }
}
