import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that answers every request from a closure and records what it was sent.
final class RecordingTransport: Transport {
    private let requests = Locked<[URLRequest]>([])
    private let answer: @Sendable (URLRequest) throws -> Response

    init(
        answer: @escaping @Sendable (URLRequest) throws -> Response = { request in
            Response(statusCode: 200, data: Data("ok".utf8), request: request)
        }
    ) {
        self.answer = answer
    }

    /// Answers every request with this status and body.
    convenience init(statusCode: Int, data: Data = Data()) {
        self.init { request in Response(statusCode: statusCode, data: data, request: request) }
    }

    var sent: [URLRequest] { requests.withLock { $0 } }

    func send(_ transfer: Transfer) async throws -> Response {
        try await transfer.sendBuffered { request in
            requests.withLock { $0.append(request) }
            return try answer(request)
        }
    }
}

/// Hands a streamed head over only once the body's first chunk is in (or the body ended), and
/// passes the rest through as it arrives. A test on a test clock can then move time knowing the
/// server's first bytes were read, instead of racing the transport's thread that delivers them
/// after the head. A reader that goes stops the inner transfer.
struct FirstChunkWithHead: Transport {
    let inner: any Transport

    func send(_ transfer: Transfer) async throws -> Response {
        try await inner.send(transfer)
    }

    func stream(_ transfer: Transfer) async throws -> StreamedResponse {
        let answer = try await inner.stream(transfer)
        let (body, writer) = ResponseBody.makeStream(limits: transfer.limits)
        var chunks = answer.body.makeAsyncIterator()
        guard let first = try await chunks.next() else {
            writer.finish()
            return StreamedResponse(head: answer.head, body: body)
        }
        writer.write(first)
        let pump = Task { [chunks] in
            var rest = chunks
            do throws(CourierError) {
                while let chunk = try await rest.next() {
                    guard writer.write(chunk) else { return }
                }
                writer.finish()
            } catch {
                writer.finish(throwing: error)
            }
        }
        writer.onTermination { pump.cancel() }
        return StreamedResponse(head: answer.head, body: body)
    }
}
