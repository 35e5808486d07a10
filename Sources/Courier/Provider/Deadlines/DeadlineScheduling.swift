import Foundation

/// Schedules deadlines for one provider on its clock.
protocol DeadlineScheduling: Sendable {
    /// Calls `fire` once `duration` has passed, unless ``cancel(_:)`` comes first. Returns the
    /// deadline's identity.
    func schedule(after duration: Duration, _ fire: @escaping @Sendable () -> Void) -> UInt64
    /// Forgets a deadline; its closure is released at once.
    func cancel(_ id: UInt64)
}
