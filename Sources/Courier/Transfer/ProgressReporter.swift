/// Feeds transport reports through a ``ProgressTracker`` into a progress stream.
///
/// Reports arrive synchronously from the URLSession delegate's queue, so the tracker sits behind
/// ``Locked`` (the delegate boundary, see there) rather than in an actor.
final class ProgressReporter: Sendable {
    private let tracker = Locked<ProgressTracker?>(nil)
    private let continuation: AsyncThrowingStream<ProgressEvent, any Error>.Continuation

    init(_ continuation: AsyncThrowingStream<ProgressEvent, any Error>.Continuation) {
        self.continuation = continuation
    }

    /// Starts counting, once the size of the request body is known: for each attempt. A later
    /// attempt (a status retried, a request sent again after a refresh) counts again from 0: the
    /// answer before it may have had a body and reached 1, which held the fraction at 1 for the
    /// whole transfer that followed (found by review).
    func start(uploadLength: Int64?) {
        tracker.withLock { tracker in
            if tracker == nil {
                tracker = ProgressTracker(uploadLength: uploadLength)
            } else {
                tracker?.restart()
            }
        }
    }

    /// Publishes what `progress` changed; `kept`: bytes already on disk that the answer's body
    /// continues (a resumed download).
    func report(_ progress: TransferProgress, kept: Int64 = 0) {
        let event = tracker.withLock { $0?.handle(progress, kept: kept) }
        if let event { continuation.yield(event) }
    }

    /// Publishes the completed event and ends the stream.
    func finish(with response: Response) {
        let event = tracker.withLock { tracker in
            if tracker == nil { tracker = ProgressTracker(uploadLength: nil) }
            return tracker?.finish(with: response)
        }
        if let event { continuation.yield(event) }
        continuation.finish()
    }

    func fail(_ error: CourierError) {
        continuation.finish(throwing: error)
    }
}
