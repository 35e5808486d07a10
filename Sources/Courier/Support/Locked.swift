import Foundation

/// A `Sendable` value guarded by a lock, for state that synchronous code must touch: code that
/// cannot suspend, so the state cannot live in an actor (URLSession's delegate callbacks,
/// cancellation handlers, Dispatch queues, a deadline that must be scheduled without suspending
/// the request).
///
/// Its users are what a search for `Locked<` finds, each at such a boundary; a plain stubbed
/// request takes none.
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
