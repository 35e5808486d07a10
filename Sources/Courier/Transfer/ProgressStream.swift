/// The events of one request with progress, from ``Provider/requestWithProgress(_:)``.
///
/// ```swift
/// for try await event in provider.requestWithProgress(.download(id)) { … }
/// ```
///
/// It ends after the completed event, or throws the request's ``CourierError``; it always throws
/// ``CourierError/cancelled`` when the iterating task is cancelled, never ends silently. It can be
/// iterated once, by one task: a second iterator throws ``CourierError/invalidUse(_:)`` at its first
/// `next()` (iterating one `AsyncThrowingStream` from two tasks would trap).
public struct ProgressStream: AsyncSequence, Sendable {
    public typealias Element = ProgressEvent
    public typealias Failure = CourierError

    private let base: AsyncThrowingStream<ProgressEvent, any Error>
    private let claimed = Locked(false)

    init(_ base: AsyncThrowingStream<ProgressEvent, any Error>) {
        self.base = base
    }

    public func makeAsyncIterator() -> AsyncIterator {
        let first = claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
        return AsyncIterator(base: first ? base.makeAsyncIterator() : nil)
    }

    /// Iterates the events.
    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = ProgressEvent
        public typealias Failure = CourierError

        private var base: AsyncThrowingStream<ProgressEvent, any Error>.AsyncIterator?
        private var finished = false

        init(base: AsyncThrowingStream<ProgressEvent, any Error>.AsyncIterator?) {
            self.base = base
        }

        /// The next event; `nil` after the completed one.
        /// - Throws: The request's ``CourierError``; ``CourierError/cancelled`` when the iterating
        ///   task is cancelled; ``CourierError/invalidUse(_:)`` for a second iterator.
        public mutating func next() async throws(CourierError) -> ProgressEvent? {
            if finished { return nil }
            guard var iterator = base else {
                throw .invalidUse("a progress stream can be iterated once, by one task")
            }
            defer { base = iterator }
            let event: ProgressEvent?
            do {
                event = try await iterator.next()
            } catch {
                finished = true
                throw CourierError(error)
            }
            guard let event else {
                // The stream ended without its completed event: the iterating task was cancelled.
                finished = true
                throw .cancelled
            }
            if event.isCompleted { finished = true }
            return event
        }
    }
}
