import Courier

/// A clock on which every sleep returns at once, moving its time forward to the sleep's deadline:
/// for tests and previews that should run through delays, backoff and throttled bodies without
/// stepping time by hand. A cancelled task's sleep still throws `CancellationError`.
///
/// ```swift
/// let provider = Provider<API>(stubClosure: Provider.delayedStub(.seconds(5)), clock: ImmediateClock())
/// _ = try await provider.request(.user)          // answered at once; the clock reads 5 s
/// ```
///
/// Use ``TestClock`` instead when the test must act while something waits (cancel it, check
/// progress): on this clock nothing ever waits.
public final class ImmediateClock: Clock, Sendable {
    /// A point in time on the clock: a duration since it was made.
    public typealias Instant = TestClock.Instant

    private let state = Locked(Instant(offset: .zero))

    /// Creates a clock at time zero.
    public init() {}

    /// The current time: the latest deadline slept to.
    public var now: Instant { state.withLock { $0 } }
    /// Zero: time is exact.
    public var minimumResolution: Duration { .zero }

    /// Returns at once (after letting other tasks run), with ``now`` moved to `deadline` if it is
    /// later; throws `CancellationError` when the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        await Task.yield()
        try Task.checkCancellation()
        state.withLock { now in now = max(now, deadline) }
    }
}
