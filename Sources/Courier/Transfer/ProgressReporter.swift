/// Feeds transport reports through a ``ProgressTracker`` into a progress stream.
///
/// Reports arrive synchronously from the URLSession delegate's queue, so the tracker sits behind
/// ``Locked`` (the delegate boundary, see there) rather than in an actor.
final class ProgressReporter: Sendable {
    private struct State {
        var tracker: ProgressTracker?
        /// The attempt counting now; reports from an earlier one are dropped.
        var attempt: UInt64 = 0
    }

    private let state = Locked(State())
    private let continuation: AsyncThrowingStream<ProgressEvent, any Error>.Continuation

    init(_ continuation: AsyncThrowingStream<ProgressEvent, any Error>.Continuation) {
        self.continuation = continuation
    }

    /// Starts counting, once the size of the request body is known: for each attempt. A later
    /// attempt (a status retried, a request sent again after a refresh) counts again from 0: the
    /// answer before it may have had a body and reached 1, which held the fraction at 1 for the
    /// whole transfer that followed (found by review).
    /// - Returns: The attempt's number, for its ``report(_:kept:attempt:)`` calls.
    func start(uploadLength: Int64?) -> UInt64 {
        state.withLock { state in
            if state.tracker == nil {
                state.tracker = ProgressTracker(uploadLength: uploadLength)
            } else {
                state.tracker?.restart()
            }
            state.attempt += 1
            return state.attempt
        }
    }

    /// Publishes what `progress` changed; `kept`: bytes already on disk that the answer's body
    /// continues (a resumed download). A report from an attempt a later one replaced is dropped:
    /// an attempt whose deadline passed may still be reporting while the next one counts (found
    /// by review).
    func report(_ progress: TransferProgress, kept: Int64 = 0, attempt: UInt64) {
        let event = state.withLock { state in
            state.attempt == attempt ? state.tracker?.handle(progress, kept: kept) : nil
        }
        if let event { continuation.yield(event) }
    }

    /// Publishes the completed event and ends the stream.
    func finish(with response: Response) {
        let event = state.withLock { state in
            if state.tracker == nil { state.tracker = ProgressTracker(uploadLength: nil) }
            return state.tracker?.finish(with: response)
        }
        if let event { continuation.yield(event) }
        continuation.finish()
    }

    func fail(_ error: CourierError) {
        continuation.finish(throwing: error)
    }
}
