import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that holds every request until the test releases it, so a test can act while
/// requests are in flight (cancel one, join a shared one, let a deadline pass) and then answer
/// them, without sleeping or polling.
///
/// ```swift
/// let transport = GatedTransport()
/// let provider = Provider<API>(transport: transport, deduplication: .enabled)
/// let calls = (0..<10).map { _ in Task { try await provider.request(.user) } }
/// await transport.waitForRequests(1)          // the shared request reached the transport
/// transport.release(statusCode: 200, data: Data("{}".utf8))
/// ```
///
/// A request whose task is cancelled ends at once with `CancellationError` and counts in
/// ``cancellations``; ``waitForCancellations(_:)`` waits for that.
public final class GatedTransport: Transport, Sendable {
    private struct State {
        var waiting: [Int: (continuation: CheckedContinuation<Void, any Error>, request: URLRequest)] = [:]
        /// Answers handed over by ``release(_:)``, taken by the waiting request once resumed. They
        /// pass through the lock rather than the continuation, so ThreadSanitizer sees the hand-off
        /// (a continuation resumed before its task suspends is invisible to it on Linux).
        var answers: [Int: Result<Response, any Error>] = [:]
        var nextID = 0
        var calls = 0
        var cancellations = 0
        /// `waitFor…` calls, each with its condition on (waiting, cancelled) requests.
        var signals = ConditionWaiters<Condition>()
        typealias Condition = @Sendable (_ waiting: Int, _ cancelled: Int) -> Bool

        /// The signals whose condition now holds, removed.
        mutating func ready() -> [CheckedContinuation<Void, Never>] {
            let (waitingCount, cancelled) = (waiting.count, cancellations)
            return signals.ready { $0(waitingCount, cancelled) }
        }
    }

    private let state = Locked(State())

    /// Creates a transport that holds every request.
    public init() {}

    /// How many requests reached the transport.
    public var calls: Int { state.withLock { $0.calls } }
    /// How many requests are waiting to be released.
    public var waitingCount: Int { state.withLock { $0.waiting.count } }
    /// How many requests were cancelled while they waited (or arrived cancelled).
    public var cancellations: Int { state.withLock { $0.cancellations } }
    /// The requests waiting now, in the order they arrived.
    public var waitingRequests: [URLRequest] {
        state.withLock { $0.waiting.sorted { $0.key < $1.key }.map(\.value.request) }
    }

    /// Holds the request until it is released (or cancelled); a file body is read into memory
    /// first, as for any transport built on `Transfer.sendBuffered(_:)`.
    public func send(_ transfer: Transfer) async throws -> Response {
        try await transfer.sendBuffered { request in try await hold(request) }
    }

    private func hold(_ request: URLRequest) async throws -> Response {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (accepted, ready) = state.withLock { state in
                    state.calls += 1
                    // Read once: a cancel between two reads would leave the continuation stored
                    // for the handler and resumed here as well.
                    let cancelled = Task.isCancelled
                    if cancelled {
                        state.cancellations += 1
                    } else {
                        state.waiting[id] = (continuation, request)
                    }
                    return (!cancelled, state.ready())
                }
                if !accepted { continuation.resume(throwing: CancellationError()) }
                ready.forEach { $0.resume() }
            }
        } onCancel: {
            let (continuation, ready) = state.withLock { state in
                let continuation = state.waiting.removeValue(forKey: id)?.continuation
                if continuation != nil { state.cancellations += 1 }
                return (continuation, state.ready())
            }
            continuation?.resume(throwing: CancellationError())
            ready.forEach { $0.resume() }
        }
        guard let answer = state.withLock({ $0.answers.removeValue(forKey: id) }) else {
            throw CourierError.invalidUse("GatedTransport resumed a request without an answer")
        }
        return try answer.get()
    }

    /// How many `waitFor…` calls are waiting (tests of the transport itself).
    var signalCount: Int { state.withLock { $0.signals.count } }

    /// Returns once at least `count` requests are waiting, or at once when the calling task is
    /// cancelled (a test past its time limit ends instead of hanging).
    public func waitForRequests(_ count: Int = 1) async {
        await signal { waiting, _ in waiting >= count }
    }

    /// Returns once at least `count` waiting requests were cancelled, or at once when the calling
    /// task is cancelled.
    public func waitForCancellations(_ count: Int = 1) async {
        await signal { _, cancelled in cancelled >= count }
    }

    /// Answers every waiting request with this status and body.
    public func release(statusCode: Int = 200, data: Data = Data("released".utf8)) {
        release { request in .success(Response(statusCode: statusCode, data: data, request: request)) }
    }

    /// Fails every waiting request with `error`.
    public func fail(with error: any Error) {
        release { _ in .failure(error) }
    }

    /// Answers every waiting request with what `answer` returns for it.
    public func release(_ answer: (URLRequest) -> Result<Response, any Error>) {
        let waiting = state.withLock { state in
            defer { state.waiting.removeAll() }
            return state.waiting.sorted { $0.key < $1.key }
        }
        let answered = waiting.map { (id: $0.key, answer: answer($0.value.request)) }
        state.withLock { state in
            for (id, answer) in answered { state.answers[id] = answer }
        }
        for (_, entry) in waiting { entry.continuation.resume() }
    }

    private func signal(_ condition: @escaping State.Condition) async {
        await state.wait(in: \.signals, for: condition) { state, condition in
            condition(state.waiting.count, state.cancellations)
        }
    }
}
