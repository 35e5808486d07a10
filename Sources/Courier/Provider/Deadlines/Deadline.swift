import Foundation

/// Races an operation against a deadline and against the caller's cancellation, and answers the
/// caller with whichever comes first, without waiting for an operation that ignores cancellation
/// (a mapping or plugin that never returns): it is cancelled and left to end on its own.
enum Deadline {
    /// - Parameters:
    ///   - expiry: Told that the deadline passed before the operation is cancelled for it, so the
    ///     operation can tell that cancel from the caller's.
    ///   - discarded: Called with the operation's value when it arrives after the caller was
    ///     answered otherwise, to release what it holds (a downloaded file).
    static func run<T: Sendable>(
        within duration: Duration, timer: any DeadlineScheduling, expiry: DeadlineExpiry? = nil,
        discarded: (@Sendable (T) -> Void)? = nil,
        _ operation: @escaping @Sendable () async -> Result<T, CourierError>
    ) async -> Result<T, CourierError> {
        let race = DeadlineRace<T>()
        // A deadline of zero or less has passed already: the caller is answered at once, and the
        // operation starts cancelled, so it sends nothing (its stages still end, for plugins).
        // It raced the timer before, and could reach the transport first (found by review).
        let passed = duration <= .zero
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                race.begin(continuation)
                if passed { race.finish(.failure(.timedOut(duration)), beforeStopping: expiry?.expire) }
                let id = timer.schedule(after: duration) {
                    race.finish(.failure(.timedOut(duration)), beforeStopping: expiry?.expire)
                }
                race.started(
                    Task {
                        if passed { withUnsafeCurrentTask { $0?.cancel() } }
                        let result = await operation()
                        timer.cancel(id)
                        if !race.finish(result), case .success(let value) = result { discarded?(value) }
                    }, timer: timer, deadline: id)
            }
        } onCancel: {
            race.finish(.failure(.cancelled))
        }
    }
}

/// The state of one ``Deadline`` race: the caller's answer, given once, and the operation's task
/// and deadline, cancelled when the caller is answered by anything else.
private final class DeadlineRace<T: Sendable>: Sendable {
    private let answer = FirstResult<Result<T, CourierError>>()
    private let running = Locked<(task: Task<Void, Never>, timer: any DeadlineScheduling, deadline: UInt64)?>(nil)

    func begin(_ continuation: CheckedContinuation<Result<T, CourierError>, Never>) {
        answer.begin(continuation)
    }

    func started(_ task: Task<Void, Never>, timer: any DeadlineScheduling, deadline: UInt64) {
        running.withLock { $0 = (task, timer, deadline) }
        if answer.isFinished { stop() }
    }

    /// Answers the caller with `result` unless it was answered already; returns whether it was
    /// this. `beforeStopping` runs, when it was, before the operation is cancelled.
    @discardableResult
    func finish(_ result: Result<T, CourierError>, beforeStopping: (() -> Void)? = nil) -> Bool {
        guard answer.finish(result) else { return false }
        beforeStopping?()
        stop()
        return true
    }

    private func stop() {
        guard let (task, timer, deadline) = running.withLock({ $0 }) else { return }
        task.cancel()
        timer.cancel(deadline)
    }
}

/// Whether a call's deadline (`callTimeout`) passed: set before the call's stages are cancelled
/// for it, so that what they report to plugins (`didReceive`, `process`, `didFinish`) is the
/// deadline the caller was answered with, `.timedOut`, not `.cancelled`. Found by review.
final class DeadlineExpiry: Sendable {
    let duration: Duration
    private let passed = Locked(false)

    init(_ duration: Duration) { self.duration = duration }

    func expire() { passed.withLock { $0 = true } }

    /// `error`, or the deadline's `.timedOut` for a cancel the deadline caused.
    func reported(_ error: CourierError) -> CourierError {
        guard case .cancelled = error, passed.withLock({ $0 }) else { return error }
        return .timedOut(duration)
    }
}
