import Foundation

/// A `Sendable` value guarded by a lock, for state that synchronous code must touch: code that
/// cannot suspend, so the state cannot live in an actor.
///
/// Where Courier uses it, and why each cannot be an actor:
/// - the `URLSessionDelegate` boundary: `SessionRouter`'s table of transfers (one per session),
///   `CancellationLatch` (one per transfer), the upload watcher's task handle (file bodies only):
///   URLSession calls its delegate synchronously on its own queue;
/// - cancellation handlers, which run synchronously: `FirstResult` and `DeadlineRace` (one each
///   per deadline), `ProgressReporter`, `ProgressStream`'s claim, the multipart encoder's
///   resumer, and an in-flight waiter's `joined` flag (shared requests only);
/// - `DeadlineTimer` (one per provider), whose `schedule` must not suspend the request;
/// - the request ids on Apple systems before macOS 15 / iOS 18 (`RequestIDSource`).
///
/// `Mutex` from the Synchronization module would do, but it needs macOS 15 / iOS 18 and Courier
/// supports older systems, so this wraps `NSLock`, which exists everywhere Foundation does.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access to `value` goes through `lock`, which makes the class safe to share.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
