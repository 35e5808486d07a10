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

    /// Starts counting, once the size of the request body is known.
    func start(uploadLength: Int64?) {
        tracker.withLock { tracker in
            if tracker == nil { tracker = ProgressTracker(uploadLength: uploadLength) }
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
