// Ctrl-C as Swift task cancellation, for command-line tools: the pattern to copy.
//
// By default SIGINT kills the process on the spot, so nothing runs after it: a multipart body
// being uploaded from its temporary file, or a download half written, stays on disk. Turning the
// signal into `Task.cancel()` lets Courier do what it does for any cancellation: stop the transfer,
// close the connection and remove its temporary files. Then the process exits with 130, as a
// shell expects after Ctrl-C.
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `operation`; Ctrl-C (SIGINT) cancels it instead of killing the process. Returns the
/// operation's exit status, or 130 when it was interrupted.
public func exitStatus(cancellingOnInterrupt operation: @escaping @Sendable () async -> Int32) async -> Int32 {
    // The signal is delivered to the dispatch source only, never as the default action.
    signal(SIGINT, SIG_IGN)
    defer { signal(SIGINT, SIG_DFL) }
    let work = Task { await operation() }
    let interrupted = Interrupted()
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler {
        interrupted.set()
        work.cancel()
    }
    source.resume()
    defer { source.cancel() }
    let status = await work.value
    return interrupted.value ? 130 : status
}

/// Whether SIGINT arrived.
private final class Interrupted: Sendable {
    private let flag = Mutexed(false)
    var value: Bool { flag.read() }
    func set() { flag.write(true) }
}

/// A value behind a lock (the examples support macOS 13, older than `Mutex`).
final class Mutexed<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func read() -> Value { lock.withLock { value } }
    func write(_ newValue: Value) { lock.withLock { value = newValue } }
    func update<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&value) } }
}
