import Courier
import CourierTesting

/// An ``ImmediateClock`` that also records how long each sleep asked for: a test reads the waits
/// of a loop without waiting for them.
final class RecordingClock: Clock, Sendable {
    typealias Instant = ImmediateClock.Instant

    private let clock = ImmediateClock()
    private let recorded = Locked<[Duration]>([])

    var now: Instant { clock.now }
    var minimumResolution: Duration { .zero }

    /// The durations slept, in order.
    var sleeps: [Duration] { recorded.withLock { $0 } }

    // clock-ok: forwards to an ImmediateClock, which returns at once.
    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let duration = clock.now.duration(to: deadline)
        recorded.withLock { $0.append(duration) }
        try await clock.sleep(until: deadline, tolerance: tolerance)  // clock-ok: ImmediateClock
    }
}
