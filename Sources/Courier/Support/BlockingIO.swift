import Foundation

/// Runs blocking I/O on a Dispatch queue instead of a Swift concurrency thread, so a read that
/// blocks (a FIFO with no writer, a slow disk) never holds one of the cooperative pool's few
/// threads. A cancelled caller is answered at once with `CancellationError`, even while the work
/// is still blocked; the work sees `isCancelled()` return `true` and its result is dropped.
package enum BlockingIO {
    /// Runs `work` on a thread of its own. Not `DispatchQueue.global()`: on Linux, Swift's
    /// cooperative pool runs on those same global queues, whose threads are as many as the cores,
    /// so work that blocks there (a FIFO read, a lock, a slow disk) holds up every task of the
    /// process. A queue made for the call targets the overcommitting root queue, which starts a
    /// thread when the others are busy.
    package static func thread(_ work: @escaping @Sendable () -> Void) {
        DispatchQueue(label: "Courier.BlockingIO").async(execute: work)
    }

    /// Runs `work` on a thread of its own (see ``thread(_:)``) and waits for it to end, whatever
    /// happens to the caller: for work whose outcome the caller must know (a file placed or not).
    /// A cancel of the calling task reaches the work through `isCancelled()`, which it reads at
    /// its safe points to stop early, and the caller then gets what the work threw.
    package static func complete<T: Sendable>(
        _ work: @escaping @Sendable (_ isCancelled: @Sendable () -> Bool) throws -> T
    ) async throws -> T {
        let cancelled = Locked(false)
        // Taken after the resume as well: the work may resume the continuation before the
        // awaiting task has suspended, and ThreadSanitizer sees the hand-off through this lock
        // (see `BlockingCall.synchronize()`).
        defer { cancelled.withLock { _ in } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                BlockingIO.thread {
                    let result = Result { try work { cancelled.withLock { $0 } } }
                    cancelled.withLock { _ in }
                    continuation.resume(with: result)
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    package static func run<T: Sendable>(
        _ work: @escaping @Sendable (_ isCancelled: @Sendable () -> Bool) throws -> T
    ) async throws -> T {
        let call = BlockingCall<T>()
        defer { call.synchronize() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard call.begin(continuation) else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                BlockingIO.thread {
                    call.finish(Result { try work { call.isCancelled } })
                }
            }
        } onCancel: {
            call.cancel()
        }
    }
}

/// One ``BlockingIO`` call: whether it was cancelled, and the caller's continuation, resumed once
/// by whichever comes first (the work's end or a cancel). Cancellation handlers and Dispatch
/// queues touch it synchronously, so it sits behind one ``Locked``.
private final class BlockingCall<T: Sendable>: Sendable {
    private struct State: Sendable {
        var cancelled = false
        var continuation: CheckedContinuation<T, any Error>?
    }

    private let state = Locked(State())

    /// Installs the continuation; `false` when the call was cancelled first.
    func begin(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
        state.withLock { state in
            if state.cancelled { return false }
            state.continuation = continuation
            return true
        }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    func finish(_ result: Result<T, any Error>) {
        take()?.resume(with: result)
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
        take()?.resume(throwing: CancellationError())
    }

    /// Called by the awaiting task once resumed. The work may resume the continuation on a
    /// Dispatch thread before the awaiting task has even suspended; the runtime then carries on
    /// without the path ThreadSanitizer watches, and the hand-off of the result looks like a race.
    /// Taking the lock the resuming thread released makes the ordering visible.
    func synchronize() {
        state.withLock { _ in }
    }

    private func take() -> CheckedContinuation<T, any Error>? {
        state.withLock { state in
            defer { state.continuation = nil }
            return state.continuation
        }
    }
}
