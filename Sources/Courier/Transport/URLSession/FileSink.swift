import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A download's body on its way to its file.
///
/// URLSession hands the delegate chunks of ~16 KB without backpressure. They are gathered into
/// batches of ``batchSize`` (writing each chunk on its own falls behind the network) and written
/// on the sink's own serial queue: not on the delegate queue, and never inside the router's lock
/// (which every start and cancel of the transport takes).
///
/// On Linux the delegate runs on the queue that drives libcurl for *every* URLSession of the
/// process (see `InlineDelegateQueue`), so whatever waits there holds up all other requests. Up to
/// ``window`` bytes the disk has not taken yet are kept in memory, so a disk that is briefly slow
/// holds up nobody; a disk that stays slower than the network makes the delegate wait for it,
/// which is the only bound on memory FoundationNetworking leaves (`suspend()` does not pause a
/// running data task, and failing the download instead failed ordinary downloads on this 2-core
/// machine, where a 500 MB/s loopback transfer left the writer 64 MiB behind). Measured with
/// `TransferCheck courier-download-neighbour` (see `scripts/large-transfers`).
///
/// The file is created with the first byte (or at the end, for an empty body) on the delegate
/// queue, so it exists before the transfer can end, and whoever ends a failed transfer can remove
/// it at once; writes and the close follow on the sink's queue, in order.
final class FileSink: Sendable {
    /// Bytes gathered before a write.
    static let batchSize = 1 << 20

    /// Writes a batch to an open file; `nil`, or the error. Tests stand in a slow disk.
    typealias Writer = @Sendable (_ descriptor: Int32, _ batch: Data, _ path: String) -> CourierError?

    let url: URL
    private let writeBatch: Writer
    private let queue = DispatchQueue(label: "Courier.FileSink")
    /// Wakes a delegate waiting for the disk (see ``waitForDisk()``).
    private let drained = DispatchSemaphore(value: 0)
    /// Bytes the disk may fall behind before the delegate waits for it.
    static let window: Int64 = 4 << 20

    private struct State: Sendable {
        var descriptor: Int32 = -1
        /// The batch being gathered.
        var pending = Data()
        /// Bytes handed to the queue and not written yet.
        var backlog: Int64 = 0
        /// The first failure: the transfer must end with it.
        var failure: CourierError?
        /// The transfer ended without a file: nothing more is written.
        var discarded = false
        /// The delegate waits for the backlog to drain.
        var waiting = false
    }

    private let state = Locked(State())

    /// Names the file; nothing is opened until the first byte arrives (or the body ends), so
    /// transfers waiting for a connection hold no file descriptor.
    init(url: URL, writer: @escaping Writer = FileSink.write) {
        self.url = url
        writeBatch = writer
    }

    /// The disk is more than ``window`` behind: ``waitForDisk()`` would wait.
    /// Test-only, kept: it reads the locked state, which no seam outside the type can reach.
    var isBehind: Bool {
        state.withLock { $0.backlog > Self.window }
    }

    /// Adds a chunk (from the delegate queue, inside the router's lock: it never waits). Throws
    /// the failure that must end the transfer: the file could not be created or written.
    func append(_ data: Data) throws(CourierError) {
        let taken = state.withLock { state -> Result<Data?, CourierError> in
            if let failure = state.failure { return .failure(failure) }
            if state.descriptor < 0 {
                do throws(CourierError) {
                    state.descriptor = try Self.open(url)
                } catch {
                    state.failure = error
                    return .failure(error)
                }
            }
            if state.pending.isEmpty { state.pending.reserveCapacity(Self.batchSize) }
            state.pending.append(data)
            guard state.pending.count >= Self.batchSize else { return .success(nil) }
            return .success(Self.take(&state))
        }
        let batch = try taken.get()
        if let batch {
            queue.async { self.write(batch) }
        }
    }

    /// The body is complete: writes what is left, closes the file, then calls `completion` with
    /// the failure, if any (on the sink's queue).
    func finish(_ completion: @escaping @Sendable (CourierError?) -> Void) {
        let batch = state.withLock { state -> Data in
            if state.descriptor < 0, state.failure == nil {
                do throws(CourierError) {
                    state.descriptor = try Self.open(url)
                } catch {
                    state.failure = error
                }
            }
            return Self.take(&state)
        }
        queue.async {
            if !batch.isEmpty { self.write(batch) }
            completion(self.close())
        }
    }

    /// The transfer ended without its file: nothing more is written, and the file is closed once
    /// the write under way (if any) is over. Removing the file is up to whoever ends the transfer.
    func discard() {
        let wake = state.withLock { state in
            state.discarded = true
            defer { state.waiting = false }
            return state.waiting
        }
        if wake { drained.signal() }
        queue.async { _ = self.close() }
    }

    /// Waits (on the delegate queue, outside any lock) while the disk is more than ``window``
    /// behind.
    func waitForDisk() {
        while state.withLock({ state in
            state.waiting = state.backlog > Self.window && !state.discarded && state.failure == nil
            return state.waiting
        }) {
            drained.wait()
        }
    }

    // MARK: On the sink's queue

    private static func take(_ state: inout State) -> Data {
        let batch = state.pending
        state.pending = Data()
        state.backlog += Int64(batch.count)
        return batch
    }

    private func write(_ batch: Data) {
        let descriptor = state.withLock { $0.failure == nil && !$0.discarded ? $0.descriptor : -1 }
        var failure: CourierError?
        if descriptor >= 0 { failure = writeBatch(descriptor, batch, url.path) }
        let wake = state.withLock { state in
            state.backlog -= Int64(batch.count)
            if state.failure == nil { state.failure = failure }
            defer { state.waiting = false }
            return state.waiting
        }
        if wake { drained.signal() }
    }

    private func close() -> CourierError? {
        let (descriptor, failure) = state.withLock { state in
            defer { state.descriptor = -1 }
            return (state.descriptor, state.failure)
        }
        if descriptor >= 0, closeFile(descriptor) != 0, failure == nil {
            return Self.fileError(path: url.path)
        }
        return failure
    }

    // MARK: System calls

    /// Creates (or truncates) the file, readable by its owner only (`FileIO.privateFileMode`), and
    /// opens it for writing; a symbolic link in its place is refused.
    private static func open(_ url: URL) throws(CourierError) -> Int32 {
        let descriptor = openFile(
            url.path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, FileIO.privateFileMode)
        guard descriptor >= 0 else { throw fileError(path: url.path) }
        return descriptor
    }

    /// Writes all of `data` (the default ``Writer``).
    static func write(_ descriptor: Int32, _ data: Data, path: String) -> CourierError? {
        FileIO.writeAll(data, to: descriptor) ? nil : fileError(path: path)
    }

    /// The failed call's `errno` as a Cocoa error naming the file, with the POSIX error under it.
    private static func fileError(path: String) -> CourierError { CourierError(CocoaError.error(path: path)) }
}

// The C library's calls, named apart from FileSink's own `open` and `close`.
private func openFile(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func closeFile(_ descriptor: Int32) -> Int32 { close(descriptor) }
