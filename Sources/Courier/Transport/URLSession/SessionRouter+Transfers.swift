import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// A transfer's life in the router's table, from the caller's side: entered (`register`), its task
// made and started (`launch`, on the router's queue on Linux), ended early (`cancel`, `abort`,
// `stop`, `fail`) and its task cancelled once. The delegate's callbacks, which fill and end an
// entry from URLSession's side, are in SessionRouter.swift.
extension SessionRouter {
    /// Enters a transfer before its task is made, so that a cancel can find it from then on, and
    /// returns its ticket. One entry per transfer, in the session's one table: a transfer needs no
    /// lock of its own.
    func register(
        request: URLRequest, file: FileSink?,
        progress: (@Sendable (TransferProgress) -> Void)?, limits: Limits, metrics: TransferMetrics,
        elapsed: (@Sendable () -> Duration)?, stream: BodyBuffer? = nil,
        headArrived: (@Sendable (Response) -> Void)? = nil  // Durable downloads (27)
    ) -> Int {
        table.withLock { table in
            table.nextTicket &+= 1
            table.entries[table.nextTicket] = Entry(
                request: request, limits: limits, file: file, progress: progress, metrics: metrics, elapsed: elapsed,
                stream: stream, headArrived: headArrived)
            return table.nextTicket
        }
    }

    /// Installs the waiting continuation, then makes the transfer's task with `make` and starts it
    /// (on ``queue`` on Linux, see ``start``). A transfer that ended before (cancelled, or aborted
    /// by its upload watcher) is forgotten and answered at once with its error, and gets no task;
    /// so is one launched after the router closed (``close(then:)``).
    func launch(
        _ ticket: Int, continuation: CheckedContinuation<CallAnswer, any Error>,
        make: @escaping @Sendable () -> URLSessionTask
    ) {
        let refused = table.withLock { table -> (any Error)? in
            let closed = table.closed
            let refused: (any Error)?? = table.entries[ticket]?.modify { entry -> (any Error)? in
                // A transfer entered after the router closed gets no task either.
                guard entry.cancelledEarly || entry.failure != nil || closed else {
                    entry.continuation = continuation
                    return nil
                }
                entry.file?.discard()
                return entry.failure
                    ?? (entry.cancelledEarly ? CancellationError() : CourierError.invalidUse(Self.closedMessage))
            }
            switch refused {
            case .none: return CancellationError()  // not registered, or forgotten
            case .some(.none): return nil
            case .some(.some(let error)):
                table.entries[ticket] = nil
                return error
            }
        }
        if let refused { return continuation.resume(throwing: refused) }
        #if canImport(FoundationNetworking)
            queue.async { [self] in start(ticket, make: make) }
        #else
            start(ticket, make: make)
        #endif
    }

    /// Makes and starts the task of a launched transfer, unless the transfer ended meanwhile (a
    /// cancel, a limit, the reader leaving): then it is forgotten and answered with its error if
    /// its caller still waits. Checked before the task is made (a transfer that ended gets none,
    /// and costs the queue no wait on FoundationNetworking) and again after; a task made for a
    /// transfer that ended while it was being made is cancelled unstarted, which removes it from
    /// the session.
    private func start(_ ticket: Int, make: () -> URLSessionTask) {
        let ended = table.withLock { table -> Ended? in
            if let ended = Self.forget(ticket, ifEndedIn: &table) { return ended }
            table.making += 1
            return nil
        }
        if let ended {
            ended.continuation?.resume(throwing: ended.error)
            return
        }
        let task = make()
        let (endedMeanwhile, invalidation) = table.withLock {
            table -> (Ended?, (@Sendable () -> Void)?) in
            table.making -= 1
            var invalidation: (@Sendable () -> Void)?
            if table.making == 0 {
                invalidation = table.pendingInvalidation
                table.pendingInvalidation = nil
            }
            if let ended = Self.forget(ticket, ifEndedIn: &table) { return (ended, invalidation) }
            table.entries[ticket]?.task = task
            table.tickets[task.taskIdentifier] = ticket
            return (nil, invalidation)
        }
        if let endedMeanwhile {
            task.cancel()
            endedMeanwhile.continuation?.resume(throwing: endedMeanwhile.error)
        } else {
            task.resume()
        }
        if let invalidation { queue.async(execute: invalidation) }
    }

    /// What a transfer entered after ``close(then:)`` is refused with.
    static let closedMessage =
        "this URLSessionTransport was invalidated (invalidateAndCancel()) and sends nothing more: make a new transport"

    /// Closes the router for good: every transfer in its table ends with
    /// ``CourierError/cancelled`` (a running task is cancelled, one not made yet never is), a
    /// transfer launched afterwards is refused with ``CourierError/invalidUse(_:)``, and
    /// `invalidate` then runs on ``queue``, once no task is being made (the last ``start`` to
    /// make one runs it). Calling it again does nothing.
    func close(then invalidate: @escaping @Sendable () -> Void) {
        let (cancelling, invalidateNow) = table.withLock { table -> ([Int], Bool) in
            guard !table.closed else { return ([], false) }
            table.closed = true
            var cancelling: [Int] = []
            // Over a copy of the keys: looping over the table's own while changing its values
            // would copy the whole table.
            for ticket in Array(table.entries.keys)
            where table.entries[ticket]?.modify({ Self.abort(&$0, with: CourierError.cancelled) }) == true {
                cancelling.append(ticket)
            }
            guard table.making == 0 else {
                table.pendingInvalidation = invalidate
                return (cancelling, false)
            }
            return (cancelling, true)
        }
        for ticket in cancelling { cancelTask(ticket) }
        if invalidateNow { queue.async(execute: invalidate) }
    }

    /// What a transfer that ended before its task started still owes: its caller's answer, when
    /// the caller has not been answered yet (a cancel answers at once; an abort leaves it here).
    private typealias Ended = (continuation: CheckedContinuation<CallAnswer, any Error>?, error: any Error)

    /// Removes the entry of `ticket` when its transfer has ended, discarding its file. Called
    /// inside the lock.
    private static func forget(_ ticket: Int, ifEndedIn table: inout Table) -> Ended? {
        guard let entry = table.entries[ticket] else { return (nil, CancellationError()) }
        guard let failure = entry.failure else { return nil }
        entry.file?.discard()
        table.entries[ticket] = nil
        return (entry.continuation, failure)
    }

    /// Cancels a transfer: a running one is answered at once with `CancellationError` (the caller
    /// does not wait for FoundationNetworking to process the cancel and report back) and its task
    /// is cancelled; one not launched yet is marked, so ``launch`` refuses it.
    func cancel(_ ticket: Int) {
        let continuation: CheckedContinuation<CallAnswer, any Error>? = table.withLock { table in
            table.entries[ticket]?.modify { entry -> CheckedContinuation<CallAnswer, any Error>? in
                guard let continuation = entry.continuation else {
                    entry.cancelledEarly = true
                    return nil
                }
                // Answered now; the entry stays until the task's end is delivered, so the cancel
                // below is made only while there is a task to cancel.
                entry.continuation = nil
                entry.failure = entry.failure ?? CancellationError()
                entry.data = Data()
                entry.file?.discard()
                return continuation
            } ?? nil
        }
        guard let continuation else { return }
        continuation.resume(throwing: CancellationError())
        cancelTask(ticket)
    }

    /// Stops a streamed transfer whose body's reader has gone.
    func stop(_ ticket: Int) {
        abort(ticket, with: CourierError.cancelled)
    }

    /// Ends the transfer of `ticket` with `error`, if it is still running.
    func abort(_ ticket: Int, with error: any Error & Sendable) {
        let cancelling = table.withLock { table -> Bool in
            table.entries[ticket]?.modify { Self.abort(&$0, with: error) } ?? false
        }
        if cancelling { cancelTask(ticket) }
    }

    /// Ends the transfer of `task` with `error` when the task reports its end, without cancelling
    /// it: for a challenge about to be refused, which ends the task anyway.
    func fail(_ task: URLSessionTask, with error: any Error & Sendable) {
        table.withLock { table in
            _ = table.update(task) { Self.abort(&$0, with: error, cancelling: false) }
        }
    }

    /// Ends a running transfer with `error` (kept in its entry); the waiting request is answered
    /// when the task reports its end. Returns whether the task must be cancelled (with
    /// ``cancelTask(_:)``, outside the lock); never when `cancelling` is `false`. Called inside
    /// the lock.
    static func abort(
        _ entry: inout Entry, with error: any Error & Sendable, cancelling: Bool = true
    ) -> Bool {
        guard entry.failure == nil else { return false }
        entry.failure = error
        // A transfer not launched yet never gets a task (see `launch`), so there is nothing to
        // cancel; one launched whose task is not made yet is seen to by `start`.
        return cancelling && (entry.continuation != nil || entry.headDelivered)
    }

    /// Cancels the task of `ticket` on ``queue``, never on the session's delegate queue (see
    /// InlineDelegateQueue), and only while its end has not been delivered: FoundationNetworking
    /// traps ("Trying to access a behaviour for a task that in not in the registry") when a cancel
    /// reaches a task it has already finished and removed, which an early reader of a fast body
    /// did within a few rounds when cancels were made from a global queue. Each task is cancelled
    /// once, however many endings ask for it (the caller's cancel, a limit, the reader leaving).
    /// A transfer whose task is not made yet has nothing to cancel here: ``start`` sees that it
    /// ended, and makes or starts no task. (On Linux a cancel queued before a pending ``start``
    /// finds no task; on Apple platforms, where ``start`` runs on the caller's thread, a cancel
    /// may land between the task's making and its `resume()`, which URLSession accepts.)
    private func cancelTask(_ ticket: Int) {
        queue.async { [table] in
            let task = table.withLock { table -> URLSessionTask? in
                table.entries[ticket]?.modify { entry -> URLSessionTask? in
                    guard !entry.cancelIssued, let task = entry.task else { return nil }
                    entry.cancelIssued = true
                    return task
                } ?? nil
            }
            task?.cancel()
        }
    }

    /// Cancels `task` (from a delegate callback) as ``cancelTask(_:)`` does.
    func cancelTask(for task: URLSessionTask) {
        if let ticket = ticket(of: task) { cancelTask(ticket) }
    }

    /// The ticket of a started task, until its end is delivered.
    func ticket(of task: URLSessionTask) -> Int? {
        table.withLock { $0.tickets[task.taskIdentifier] }
    }
}
