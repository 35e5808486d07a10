import Foundation

/// A `Sendable` value guarded by a lock, for state that synchronous code must touch: code that
/// cannot suspend, so the state cannot live in an actor.
///
/// Where Courier uses it, and why each cannot be an actor. Per transport, provider or stream:
/// - `SessionRouter`'s table of transfers, one per `URLSessionTransport`: URLSession calls its
///   delegate synchronously on its own queue. A transfer is an entry in that table, cancellation
///   included, so a request over `URLSession` takes no lock of its own;
/// - `DeadlineTimer`, one per provider, whose `schedule` must not suspend the request;
/// - the request ids on Apple systems before macOS 15 / iOS 18 (`RequestIDSource`), one per provider.
/// - `TrafficController`'s queue, one per provider with a `TrafficPolicy`: a cancelled waiter
///   leaves it from its task's (synchronous) cancellation handler, and a streamed body gives its
///   slot back from its (synchronous) end handler.
///
/// Per request, only where a feature asks for it (cancellation handlers and Dispatch queues call
/// in synchronously):
/// - a deadline (`timeout`, `callTimeout`): `FirstResult` and `DeadlineRace`'s task handle;
/// - progress: `ProgressReporter` and `ProgressStream`'s claim;
/// - a shared (de-duplicated) request: the waiter's `joined` flag;
/// - blocking file I/O moved off the cooperative pool (`BlockingIO`: file bodies read into memory,
///   multipart bodies built in memory): one `BlockingCall`;
/// - a streamed response: its `BodyBuffer`, between the delegate that writes and the task that reads;
/// - a download: its `FileSink`, between the delegate and the queue that writes to disk.
///
/// A stubbed request without these features takes none.
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
