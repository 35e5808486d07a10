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

    func send(_ request: URLRequest) async throws -> Response {
        requests.withLock { $0.append(request) }
        return try answer(request)
    }
}

/// A transport whose requests wait until the test releases them or their task is cancelled.
final class GatedTransport: Transport {
    private struct State {
        var waiting: [Int: CheckedContinuation<Response, any Error>] = [:]
        var requests: [Int: URLRequest] = [:]
        var nextID = 0
        var calls = 0
        var cancellations = 0
        var arrivalWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    /// How many requests reached the transport.
    var calls: Int { state.withLock { $0.calls } }
    /// How many waiting requests were cancelled.
    var cancellations: Int { state.withLock { $0.cancellations } }

    func send(_ request: URLRequest) async throws -> Response {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Response, any Error>) in
                let ready: [CheckedContinuation<Void, Never>]? = state.withLock { state in
                    state.calls += 1
                    if Task.isCancelled {
                        state.cancellations += 1
                        return nil
                    }
                    state.waiting[id] = continuation
                    state.requests[id] = request
                    let count = state.waiting.count
                    let ready = state.arrivalWaiters.filter { $0.count <= count }.map(\.continuation)
                    state.arrivalWaiters.removeAll { $0.count <= count }
                    return ready
                }
                guard let ready else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                ready.forEach { $0.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state in
                let continuation = state.waiting.removeValue(forKey: id)
                if continuation != nil { state.cancellations += 1 }
                state.requests.removeValue(forKey: id)
                return continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Returns once at least `count` requests are waiting in the transport.
    func waitForRequests(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.waiting.count >= count { return true }
                state.arrivalWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Answers every waiting request.
    func release(statusCode: Int = 200, data: Data = Data("released".utf8)) {
        let waiting = state.withLock { state in
            defer {
                state.waiting.removeAll()
                state.requests.removeAll()
            }
            return state.waiting.map { ($0.value, state.requests[$0.key]) }
        }
        for (continuation, request) in waiting {
            continuation.resume(returning: Response(statusCode: statusCode, data: data, request: request))
        }
    }
}
