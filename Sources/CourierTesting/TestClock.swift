import Courier

/// A clock that moves only when the test says so, for stub delays, retry backoff and deadlines.
///
/// ```swift
/// let clock = TestClock()
/// let provider = Provider<API>(stubClosure: Provider.delayedStub(.seconds(5)), clock: clock)
/// let request = Task { try await provider.request(.user("ada")) }
/// await clock.waitForSleepers(1)      // the request is waiting on the clock
/// clock.advance(by: .seconds(5))      // …and now it is answered
/// ```
///
/// Sleepers wake when ``advance(by:)`` passes their deadline; ``waitForSleepers(_:)`` returns once
/// the code under test is asleep, so nothing depends on real time. Cancelling a sleeping task
/// wakes it with `CancellationError`.
public final class TestClock: Clock, Sendable {
    /// A point in test time: a duration since the clock was made.
    public struct Instant: InstantProtocol {
        /// Time since the clock's start.
        public var offset: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    /// Creates a clock at time zero.
    public init() {}

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
        var cancelledBeforeSleeping: Set<Int> = []
        /// ``waitForSleepers(_:)`` calls, each with the sleeper count it waits for.
        var waiters = ConditionWaiters<Int>()
    }

    private let state = Locked(State())

    /// The current test time.
    public var now: Instant { state.withLock { $0.now } }
    /// Zero: test time is exact.
    public var minimumResolution: Duration { .zero }

    /// How many tasks are asleep on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// How many ``waitForSleepers(_:)`` calls are waiting (tests of the clock itself).
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Suspends until ``advance(by:)`` reaches `deadline`, or throws `CancellationError` when the
    /// task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        // A cancel that came once the sleep was over left its mark for nothing.
        defer { state.withLock { _ = $0.cancelledBeforeSleeping.remove(id) } }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case wake, cancelled, sleep([CheckedContinuation<Void, Never>]) }
                let outcome: Outcome = state.withLock { state in
                    if state.cancelledBeforeSleeping.remove(id) != nil { return .cancelled }
                    if deadline <= state.now { return .wake }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    let count = state.sleepers.count
                    return .sleep(state.waiters.ready { $0 <= count })
                }
                switch outcome {
                case .wake: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .sleep(let ready): ready.forEach { $0.resume() }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                let sleeper = state.sleepers.removeValue(forKey: id)
                if sleeper == nil { state.cancelledBeforeSleeping.insert(id) }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come, earliest first.
    /// - Parameter duration: How far to move.
    public func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns once at least `count` tasks are asleep on this clock, or at once when the calling
    /// task is cancelled (a test past its time limit ends instead of hanging).
    /// - Parameter count: How many sleepers to wait for. Default: 1.
    public func waitForSleepers(_ count: Int = 1) async {
        await state.wait(in: \.waiters, for: count) { state, count in state.sleepers.count >= count }
    }
}
