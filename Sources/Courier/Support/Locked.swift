import Foundation

/// A value guarded by a lock, for state that synchronous callbacks must touch.
///
/// The only place Courier needs this is the `URLSessionDelegate` boundary: URLSession calls its
/// delegate synchronously on its own queue, so that state cannot live in an actor. `Mutex` from
/// the Synchronization module would do, but it needs macOS 15 / iOS 18 and Courier supports
/// older systems, so this wraps `NSLock`, which exists everywhere Foundation does.
package final class Locked<Value>: @unchecked Sendable {
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
