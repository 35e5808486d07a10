import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A streamed response body between its writer (a transport; for `URLSessionTransport` the
/// session delegate, which must never block) and its one reader (the consuming task).
///
/// Writes never wait: up to ``memoryWindow`` bytes the reader has not taken yet stay in memory
/// (each chunk counted at ``chunkOverhead`` bytes more than its body, so a flood of tiny chunks
/// cannot hold many times the window);
/// beyond that they go to a temporary file, which is unlinked as soon as it is opened (so it can
/// never be left behind, whatever ends the process) and read back in order. A slow reader costs
/// disk, bounded by ``Limits/maxStreamBacklogBytes``, never memory, and never holds up the network
/// thread or other requests. (Blocking the delegate instead would stall every URLSession of the
/// process on Linux: FoundationNetworking holds task creation, `resume()` and `cancel()` of every
/// session while a delegate callback blocks.)
///
/// The writer calls in synchronously from URLSession's delegate queue, so the state sits behind
/// ``Locked`` rather than in an actor.
final class BodyBuffer: Sendable {
    /// Bytes kept in memory before the backlog goes to disk.
    static let memoryWindow = 4 << 20
    /// What a chunk in memory costs beyond its bytes, counted against ``memoryWindow``: its
    /// `Data` storage object, its allocation and its place in the queue (about 128 bytes for a
    /// chunk from URLSession's delegate). Without it, 4 million one-byte chunks (a server that
    /// sends a chunked body a byte at a time) fitted in the 4 MiB window and held ≈ 120 MB.
    static let chunkOverhead = 128
    /// The most bytes read back from the file at once.
    static let spillReadSize = 256 << 10

    /// The file is a ring of ``capacity`` bytes (the backlog limit): the offsets count every byte
    /// ever written and read, and a byte's place in the file is its offset modulo the capacity.
    /// The unread bytes never exceed the limit, so a write never reaches them; the file never
    /// grows past the limit, however long a reader that never quite catches up lags (it grew with
    /// every byte of the stream when it was reset only once the reader had caught up; found by
    /// review).
    private struct Spill: Sendable {
        let descriptor: Int32
        let capacity: Int64
        /// Where the next write goes.
        var writeOffset: Int64 = 0
        /// Where the next read starts.
        var readOffset: Int64 = 0
        /// A read is in progress: the file must not be reset under it.
        var reading = false
        var unread: Int64 { writeOffset - readOffset }
        /// Where in the file the byte at `offset` is.
        func place(_ offset: Int64) -> Int64 { offset % capacity }
    }

    private struct State: Sendable {
        var chunks: [Data] = []
        var head = 0
        /// Chunks moved by dropping the read ones from the front of `chunks`, ever.
        var compactionMoves = 0
        var memoryBytes = 0
        var spill: Spill?
        /// How the body ended, once it has: `nil` for the end, or the error.
        var end: CourierError??
        /// The writer ended the body (so nobody needs to stop it).
        var writerDone = false
        /// The reader, waiting for a chunk, the end or an error.
        var waiter: CheckedContinuation<Void, Never>?
        /// The reader has gone (stopped early, cancelled, or the body failed): writes are refused.
        var terminated = false
        var onTermination: (@Sendable () -> Void)?
        /// The call's end (plugins' `didFinish`), see ``onEnd(_:)``.
        var onEnd: (@Sendable (CourierError?) async -> Void)?
        var claimed = false
        var idle: (timer: any DeadlineScheduling, after: Duration)?
        var idleDeadline: UInt64?
        /// Counts the reader's waits that armed an idle deadline: a deadline fires only for the
        /// wait it was armed for, while the reader still waits (see ``idlePassed(_:after:)``).
        var idleWaits: UInt64 = 0
        var total: (timer: any DeadlineScheduling, id: UInt64)?
        var received: Int64 = 0

        var hasChunks: Bool { head < chunks.count }
        /// ``memoryBytes`` plus ``chunkOverhead`` for each chunk in memory: what the window holds.
        var memoryCost: Int { memoryBytes + (chunks.count - head) * BodyBuffer.chunkOverhead }
    }

    let maxBacklog: Int64
    /// Where the spill file is made (and unlinked at once).
    let spillDirectory: URL
    private let state = Locked(State())

    /// Tests: runs on the reader's task each time it is about to wait for the writer (it found
    /// nothing to read), so a test can cancel the task in that moment.
    let willWait: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - limits: The limits (``Limits/maxStreamBacklogBytes``).
    ///   - spillDirectory: Where the spill file goes. Default: the temporary directory (a test
    ///     passes a folder of its own to count the descriptors left open there).
    ///   - willWait: Tests: see ``willWait``.
    init(limits: Limits, spillDirectory: URL? = nil, willWait: (@Sendable () -> Void)? = nil) {
        maxBacklog = max(1, limits.maxStreamBacklogBytes)
        self.spillDirectory = spillDirectory ?? FileManager.default.temporaryDirectory
        self.willWait = willWait
    }

    deinit {
        // Nothing can read it any more: the writer is told, the file closed.
        terminate()
    }

    // MARK: Writer

    /// Appends a chunk; `false` when the reader has gone (the writer should stop the transfer).
    @discardableResult
    func write(_ data: Data) -> Bool {
        guard !data.isEmpty else { return !isTerminated }
        var failure: CourierError?
        let (accepted, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            guard !state.terminated, state.end == nil else { return (false, nil) }
            state.received += Int64(data.count)
            let backlog = Int64(state.memoryBytes) + (state.spill?.unread ?? 0) + Int64(data.count)
            if backlog > maxBacklog {
                failure = .limitExceeded(.streamBacklog(limit: maxBacklog))
                return (false, nil)
            }
            let spilling = (state.spill?.unread ?? 0) > 0 || state.spill?.reading == true
            if !spilling,
                state.memoryCost + data.count + Self.chunkOverhead <= Self.memoryWindow || state.memoryBytes == 0
            {
                state.chunks.append(data)
                state.memoryBytes += data.count
            } else {
                do throws(CourierError) {
                    try Self.append(data, to: &state.spill, in: spillDirectory, capacity: maxBacklog)
                } catch {
                    failure = error
                    return (false, nil)
                }
            }
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume()
        if let failure {
            fail(failure)
            return false
        }
        return accepted
    }

    /// The writer ends the body: `nil` for a complete body, or the error that ended it.
    func finish(_ error: CourierError? = nil) {
        end(with: error, byWriter: true)
    }

    /// Returns whether a waiting reader was woken to the end.
    @discardableResult
    private func end(with error: CourierError?, byWriter: Bool) -> Bool {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if byWriter { state.writerDone = true }
            if case .some(let ended) = state.end {
                // The writer finished the body and the reader has not read all of it: a failure
                // now (the total deadline, say) ends it for the reader. Kept as a success, the
                // reader would meet a clean end short of the bytes the failure throws away
                // (found by review).
                guard !byWriter, ended == nil, let error, state.hasChunks || (state.spill?.unread ?? 0) > 0 else {
                    return nil
                }
                state.end = .some(error)
                return nil
            }
            state.end = .some(error)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
        return waiter != nil
    }

    /// What to do when the reader goes before the body ends (cancel the transfer). Runs at once
    /// if it has gone already.
    func onTermination(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.terminated { return !state.writerDone }
            state.onTermination = handler
            return false
        }
        if runNow { handler() }
    }

    /// What the call does when the stream is over for its reader, however it ended: `nil` when
    /// the body was read to its end, ``CourierError/cancelled`` when the reader left early, or the
    /// error.
    ///
    /// It runs as part of the call, awaited: by the reader that meets the end or the error (its
    /// `next()` returns after it), or here when the body has ended already. Only a body whose
    /// reader goes away without reading on (an iterator dropped, a head discarded) leaves it to a
    /// task of its own, since nothing is left to wait for it. Several handlers run in the order
    /// they were given (traffic control's slot, then the plugins' end).
    func onEnd(_ handler: @escaping @Sendable (CourierError?) async -> Void) async {
        let runNow = state.withLock { state -> CourierError?? in
            if state.terminated { return .some(Self.outcome(of: state.end)) }
            // Traffic control (27): handlers chain (a slot held while the body flows, then plugins').
            if let first = state.onEnd {
                state.onEnd = { @Sendable outcome in
                    await first(outcome)
                    await handler(outcome)
                }
            } else {
                state.onEnd = handler
            }
            return .none
        }
        if case .some(let outcome) = runNow { await handler(outcome) }
    }

    /// The reader met the end or an error: the stream is terminated, and the call's end
    /// (``onEnd(_:)``) runs here, before the reader is answered.
    /// `readerCancelled`: the reader is answered ``CourierError/cancelled``, and so is the call's
    /// end, whatever ended the body before (a body the writer had finished, its last chunks unread,
    /// ended the call as a success; found by review).
    private func finishForReader(readerCancelled: Bool = false) async {
        terminate(leavingEndToReader: true)
        let (handler, outcome) = state.withLock { state in
            defer { state.onEnd = nil }
            return (state.onEnd, readerCancelled ? .cancelled : Self.outcome(of: state.end))
        }
        if let handler { await handler(outcome) }
    }

    /// The reader ends the body itself: with an error of its own (a line over its limit, a value
    /// that does not decode), or `nil` at an end it recognises (a sentinel such as `[DONE]`). The
    /// transfer stops, and the call's end runs with that outcome before the reader is answered:
    /// plugins saw `cancelled` for both when the iterator was dropped (found by review).
    func readerEnded(_ outcome: CourierError?) async {
        state.withLock { state in
            // Unless the call's end ran already (the reader met the body's own end before).
            guard state.onEnd != nil else { return }
            state.end = .some(outcome)
            state.chunks = []
            state.head = 0
            state.memoryBytes = 0
        }
        await finishForReader()
    }

    private static func outcome(of end: CourierError??) -> CourierError? {
        switch end {
        case .none: .cancelled
        case .some(let error): error
        }
    }

    // MARK: Reader

    /// Claims the body for the one reader; `false` for any later one.
    func claim() -> Bool {
        state.withLock { state in
            defer { state.claimed = true }
            return !state.claimed
        }
    }

    /// Fails the stream with `timedOut` when the reader waits longer than `duration` for a chunk.
    func setIdleTimeout(_ duration: Duration, timer: any DeadlineScheduling) {
        state.withLock { $0.idle = (timer, duration) }
    }

    /// Fails the stream with `timedOut` once `duration` has passed, however it is going.
    func setTotalTimeout(_ duration: Duration, timer: any DeadlineScheduling) {
        let id = timer.schedule(after: duration) { [weak self] in self?.fail(.timedOut(duration)) }
        let cancelNow = state.withLock { state -> Bool in
            if state.terminated || state.end != nil { return true }
            state.total = (timer, id)
            return false
        }
        if cancelNow { timer.cancel(id) }
    }

    /// The next chunk in order; `nil` at the end of the body.
    func next() async throws(CourierError) -> Data? {
        while true {
            if Task.isCancelled {
                end(with: .cancelled, byWriter: false)
                await finishForReader(readerCancelled: true)
                throw .cancelled
            }
            switch take() {
            case .chunk(let data):
                return data
            case .end(let error):
                await finishForReader()
                if let error { throw error }
                return nil
            case .spilled(let descriptor, let offset, let length):
                let read = await readSpilled(descriptor, at: offset, length: length)
                if Task.isCancelled {
                    end(with: .cancelled, byWriter: false)
                    await finishForReader(readerCancelled: true)
                    throw .cancelled
                }
                switch read {
                case .success(let data):
                    return data
                case .failure(let error):
                    let failure = CourierError(error)
                    end(with: failure, byWriter: false)
                    await finishForReader()
                    throw failure
                }
            case .wait:
                willWait?()
                await waitForWriter()
            }
        }
    }

    /// Ends the stream with `error` for the reader and stops the writer.
    ///
    /// The call's end is left to the reader when one was waiting: it wakes to the error and runs
    /// it before it is answered, as for every other end (a total deadline on a stalled stream
    /// ran it on a task of its own, racing the reader's error; found by review). A reader busy
    /// elsewhere is not waited for: the traffic slot and plugins' `didFinish` are part of the
    /// end, and a deadline must not be held up by a reader that does not come back.
    func fail(_ error: CourierError) {
        terminate(leavingEndToReader: end(with: error, byWriter: false))
    }

    /// The reader has gone: the writer is refused from now on and told (once, unless it ended the
    /// body itself), deadlines are cancelled and the file closed.
    ///
    /// The call's end (``onEnd(_:)``) is left to the reader when it is waiting now (it wakes to
    /// the end) or when it is the reader terminating; otherwise nobody is left to wait for it and
    /// it runs on a task of its own.
    func terminate(leavingEndToReader: Bool = false) {
        let (handler, ended, waiter, descriptor, deadlines) = state.withLock {
            state -> (
                (@Sendable () -> Void)?, (@Sendable () async -> Void)?, CheckedContinuation<Void, Never>?, Int32?,
                [(any DeadlineScheduling, UInt64)]
            ) in
            guard !state.terminated else {
                // Terminated already, the call's end left to a reader that has not run it (a
                // safeguard: the reader ``fail(_:)`` woke runs it as it wakes): it runs now.
                guard !leavingEndToReader, state.waiter == nil, let onEnd = state.onEnd else {
                    return (nil, nil, nil, nil, [])
                }
                state.onEnd = nil
                let outcome = Self.outcome(of: state.end)
                return (nil, { await onEnd(outcome) }, nil, nil, [])
            }
            state.terminated = true
            let handler = state.writerDone ? nil : state.onTermination
            state.onTermination = nil
            var ended: (@Sendable () async -> Void)?
            if !leavingEndToReader, state.waiter == nil, let onEnd = state.onEnd {
                // The reader left a body the writer had finished with chunks still unread: it
                // left early, and the call ends cancelled, not as a success.
                var leftEarly = false
                if case .some(.none) = state.end, state.hasChunks || (state.spill?.unread ?? 0) > 0 {
                    leftEarly = true
                }
                let outcome = leftEarly ? .cancelled : Self.outcome(of: state.end)
                ended = { await onEnd(outcome) }
                state.onEnd = nil
            }
            let descriptor = state.spill?.reading == true ? nil : state.spill?.descriptor
            if descriptor != nil { state.spill = nil }
            state.chunks = []
            state.head = 0
            state.memoryBytes = 0
            var deadlines: [(any DeadlineScheduling, UInt64)] = []
            if let total = state.total { deadlines.append((total.timer, total.id)) }
            if let idle = state.idle, let id = state.idleDeadline { deadlines.append((idle.timer, id)) }
            state.total = nil
            state.idleDeadline = nil
            defer { state.waiter = nil }
            return (handler, ended, state.waiter, descriptor, deadlines)
        }
        for (timer, id) in deadlines { timer.cancel(id) }
        if let descriptor { close(descriptor) }
        waiter?.resume()
        handler?()
        if let ended { Task { await ended() } }
    }

    var isTerminated: Bool { state.withLock { $0.terminated } }

    /// Whether the reader is waiting for the writer now.
    /// Test-only, kept: it reads the locked state, which no seam outside the type can reach.
    var readerIsWaiting: Bool { state.withLock { $0.waiter != nil } }

    /// Bytes held in memory now (the rest of the backlog is on disk).
    /// Test-only, kept: it reads the locked state, which no seam outside the type can reach.
    var bytesInMemory: Int { state.withLock { $0.memoryBytes } }

    /// Bytes written so far.
    var received: Int64 { state.withLock { $0.received } }

    /// Chunks moved by dropping the read ones from the front of the queue, ever.
    /// Test-only, kept: it reads the locked state, which no seam outside the type can reach.
    var compactionMoves: Int { state.withLock { $0.compactionMoves } }

    private enum Step {
        case chunk(Data)
        case end(CourierError?)
        case spilled(descriptor: Int32, offset: Int64, length: Int)
        case wait
    }

    private func take() -> Step {
        state.withLock { state -> Step in
            if state.hasChunks {
                let data = state.chunks[state.head]
                state.chunks[state.head] = Data()
                state.head += 1
                state.memoryBytes -= data.count
                // The read chunks leave the front of the queue once they are at least half of
                // it: each move is paid for by a read, so a backlog of many small chunks is read
                // in linear time (every 65th read moved all the chunks still queued).
                if state.head == state.chunks.count || (state.head > 64 && state.head * 2 >= state.chunks.count) {
                    state.compactionMoves += state.chunks.count - state.head
                    state.chunks.removeFirst(state.head)
                    state.head = 0
                }
                return .chunk(data)
            }
            if var spill = state.spill, spill.unread > 0 {
                // Up to the end of the ring at most: the read after it starts at the file's start.
                let place = spill.place(spill.readOffset)
                let length = Int(min(spill.unread, Int64(Self.spillReadSize), spill.capacity - place))
                spill.reading = true
                state.spill = spill
                return .spilled(descriptor: spill.descriptor, offset: place, length: length)
            }
            if case .some(let end) = state.end { return .end(end) }
            if state.terminated { return .end(.cancelled) }
            return .wait
        }
    }

    /// Reads part of the spill file off the cooperative pool and accounts for it
    /// (``finishRead(length:)``) however the reader ends: the descriptor is closed by whichever
    /// comes last of this read and the stream's end. The reader waits for the read even when it
    /// is cancelled meanwhile (at most ``spillReadSize`` bytes of a local file): answering it
    /// first, as ``BlockingIO`` does, left the read unaccounted for and the file open.
    private func readSpilled(_ descriptor: Int32, at offset: Int64, length: Int) async -> Result<Data, any Error> {
        let read = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Data, any Error>, Never>) in
            BlockingIO.thread { [self] in
                let read = Result { try Self.read(descriptor, at: offset, length: length) }
                finishRead(length: (try? read.get()) == nil ? 0 : length)
                continuation.resume(returning: read)
            }
        }
        // The read's thread released the lock after it; taking it orders the hand-off for
        // ThreadSanitizer (see SessionRouter.synchronize).
        state.withLock { _ in }
        return read
    }

    private func finishRead(length: Int) {
        let closing = state.withLock { state -> Int32? in
            guard var spill = state.spill else { return nil }
            spill.reading = false
            spill.readOffset += Int64(length)
            if spill.unread == 0 {
                // Caught up: the file starts again from nothing (its disk space freed).
                _ = ftruncate(spill.descriptor, 0)
                spill.readOffset = 0
                spill.writeOffset = 0
            }
            state.spill = spill
            if state.terminated {
                state.spill = nil
                return spill.descriptor
            }
            return nil
        }
        if let closing { close(closing) }
    }

    private func waitForWriter() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let (resumeNow, idle, wait) = state.withLock {
                    state -> (Bool, (any DeadlineScheduling, Duration)?, UInt64) in
                    // The cancel flag is read again here, under the lock the handler below takes:
                    // a cancel that came after `next()` looked at it, and whose handler ran before
                    // the waiter was stored, found nothing to resume (the flag is set before the
                    // handler runs). Without this, the reader of a stalled body would wait on.
                    if state.hasChunks || (state.spill?.unread ?? 0) > 0 || state.end != nil || state.terminated
                        || Task.isCancelled
                    {
                        return (true, nil, 0)
                    }
                    state.waiter = continuation
                    if state.idle != nil { state.idleWaits &+= 1 }
                    return (false, state.idle, state.idleWaits)
                }
                if resumeNow {
                    continuation.resume()
                    return
                }
                if let (timer, duration) = idle {
                    let id = timer.schedule(after: duration) { [weak self] in self?.idlePassed(wait, after: duration) }
                    let stale = state.withLock { state -> UInt64? in
                        guard state.waiter != nil, !state.terminated else { return id }
                        let previous = state.idleDeadline
                        state.idleDeadline = id
                        return previous
                    }
                    if let stale { timer.cancel(stale) }
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
        // Whatever woke the reader, the idle deadline of this wait is over.
        let idle = state.withLock { state -> (any DeadlineScheduling, UInt64)? in
            guard let id = state.idleDeadline, let timer = state.idle?.timer else { return nil }
            state.idleDeadline = nil
            return (timer, id)
        }
        if let (timer, id) = idle { timer.cancel(id) }
    }

    /// The idle deadline of the reader's wait number `wait` passed. It ends the stream only if
    /// the reader is still in that wait: a chunk (or the end) that came first woke the reader,
    /// and a deadline that fires before the woken reader has cancelled it would otherwise throw
    /// that chunk away with the buffer and answer `timedOut`.
    /// Decided and ended in one step under the lock: from then on writes are refused, so nothing
    /// that arrives is dropped unread.
    private func idlePassed(_ wait: UInt64, after duration: Duration) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter, state.idleWaits == wait, state.end == nil else { return nil }
            state.end = .some(.timedOut(duration))
            state.waiter = nil
            return waiter
        }
        guard let waiter else { return }
        waiter.resume()
        // The reader wakes to the end and runs the call's end itself, before `next()` throws.
        terminate(leavingEndToReader: true)
    }

    // MARK: The file

    private static func append(
        _ data: Data, to spill: inout Spill?, in directory: URL, capacity: Int64
    ) throws(CourierError) {
        if spill == nil { spill = Spill(descriptor: try openSpillFile(in: directory), capacity: capacity) }
        guard var current = spill else { return }
        // To the end of the ring, and the rest from the file's start.
        let place = current.place(current.writeOffset)
        let first = Int(min(Int64(data.count), current.capacity - place))
        let start = data.startIndex
        guard FileIO.writeAll(data[start..<start + first], to: current.descriptor, at: place),
            first == data.count || FileIO.writeAll(data[(start + first)...], to: current.descriptor, at: 0)
        else {
            throw CourierError(
                CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "the stream's spill file"]))
        }
        current.writeOffset += Int64(data.count)
        spill = current
    }

    /// The spill file's size now (0 with none). Test-only, kept: the descriptor is private state.
    var spillFileSize: Int64 {
        state.withLock { state in
            guard let descriptor = state.spill?.descriptor else { return 0 }
            var info = stat()
            return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : -1
        }
    }

    /// Opens a new temporary file and unlinks it at once: only the descriptor refers to it.
    private static func openSpillFile(in directory: URL) throws(CourierError) -> Int32 {
        let path = directory.appendingPathComponent("courier-stream-\(UUID().uuidString).spill").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CourierError(CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]))
        }
        unlink(path)
        return descriptor
    }

    private static func read(_ descriptor: Int32, at offset: Int64, length: Int) throws -> Data {
        var data = Data(count: length)
        let count = data.withUnsafeMutableBytes { raw -> Int in
            guard let base = raw.baseAddress else { return 0 }
            var done = 0
            while done < length {
                let result = pread(descriptor, base + done, length - done, off_t(offset) + off_t(done))
                if result < 0, errno == EINTR { continue }
                if result <= 0 { return result < 0 ? -1 : done }
                done += result
            }
            return done
        }
        guard count == length else { throw CocoaError(.fileReadUnknown) }
        return data
    }
}
