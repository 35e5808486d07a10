/// A continuation answered once, by whichever side comes first (an operation, a deadline, a
/// cancel), also when that side comes before the continuation is installed.
///
/// The sides call ``finish(_:)`` synchronously, from tasks and from cancellation handlers, so the
/// state sits behind ``Locked`` rather than in an actor.
final class FirstResult<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, Never>?
        var result: Value?
    }

    private let state = Locked(State())

    /// Installs the waiting continuation; resumes it at once if a result came first.
    func begin(_ continuation: CheckedContinuation<Value, Never>) {
        let early = state.withLock { state in
            if state.result == nil { state.continuation = continuation }
            return state.result
        }
        if let early { continuation.resume(returning: early) }
    }

    /// Answers with `value` unless an answer was given already; returns whether this one was.
    @discardableResult
    func finish(_ value: Value) -> Bool {
        let (won, continuation) = state.withLock { state -> (Bool, CheckedContinuation<Value, Never>?) in
            guard state.result == nil else { return (false, nil) }
            state.result = value
            defer { state.continuation = nil }
            return (true, state.continuation)
        }
        continuation?.resume(returning: value)
        return won
    }

    /// Whether an answer was given.
    var isFinished: Bool { state.withLock { $0.result != nil } }
}

extension FirstResult {
    /// `operation`'s value, or `cancelled` as soon as the calling task is cancelled (also when it
    /// was cancelled before the call). `operation` runs in a task of its own and is never
    /// cancelled from here: whoever owns the work it waits for decides whether that goes on. A
    /// value that comes after the caller was answered is dropped.
    static func value(
        of operation: @escaping @Sendable () async -> Value, orOnCancel cancelled: Value
    ) async -> Value {
        let race = FirstResult<Value>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                race.begin(continuation)
                Task { race.finish(await operation()) }
            }
        } onCancel: {
            race.finish(cancelled)
        }
    }
}
