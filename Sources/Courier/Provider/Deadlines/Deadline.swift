import Foundation

/// Races an operation against a deadline and against the caller's cancellation, and answers the
/// caller with whichever comes first, without waiting for an operation that ignores cancellation
/// (a mapping or plugin that never returns): it is cancelled and left to end on its own.
enum Deadline {
    /// - Parameter discarded: Called with the operation's value when it arrives after the caller
    ///   was answered otherwise, to release what it holds (a downloaded file).
    static func run<T: Sendable>(
        within duration: Duration, timer: any DeadlineScheduling,
        discarded: (@Sendable (T) -> Void)? = nil,
        _ operation: @escaping @Sendable () async -> Result<T, CourierError>
    ) async -> Result<T, CourierError> {
        let race = DeadlineRace<T>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                race.begin(continuation)
                let id = timer.schedule(after: duration) {
                    race.finish(.failure(.timedOut(duration)))
                }
                race.started(
                    Task {
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

    /// Answers the caller with `result` unless it was answered already; returns whether it was this.
    @discardableResult
    func finish(_ result: Result<T, CourierError>) -> Bool {
        guard answer.finish(result) else { return false }
        stop()
        return true
    }

    private func stop() {
        guard let (task, timer, deadline) = running.withLock({ $0 }) else { return }
        task.cancel()
        timer.cancel(deadline)
    }
}
