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
