import Foundation

/// A response body as it arrives: an async sequence of chunks (`Data`), read once, by one task.
///
/// Reading it applies backpressure without holding anything up: what arrives faster than it is
/// read waits in memory (up to 4 MiB) and then in a temporary file that is never left behind
/// (``Limits/maxStreamBacklogBytes`` bounds it). Cancelling the reading task, leaving the loop
/// early, or dropping the body unread ends the transfer and closes its connection.
///
/// Transports make one with ``makeStream(limits:)`` and feed it through its ``Writer``; a body
/// that is already complete is ``init(_:)``.
public struct ResponseBody: AsyncSequence, Sendable {
    public typealias Element = Data
    public typealias Failure = CourierError

    /// The reading side: when the last copy of the body goes, the transfer is stopped.
    final class Handle: Sendable {
        let buffer: BodyBuffer

        init(_ buffer: BodyBuffer) {
            self.buffer = buffer
        }

        deinit {
            buffer.terminate()
        }
    }

    let handle: Handle

    var buffer: BodyBuffer { handle.buffer }

    init(buffer: BodyBuffer) {
        handle = Handle(buffer)
    }

    /// A body that is already complete: `data` as one chunk (none when it is empty).
    public init(_ data: Data) {
        let buffer = BodyBuffer(limits: .default)
        if !data.isEmpty { buffer.write(data) }
        buffer.finish()
        self.init(buffer: buffer)
    }

    /// Makes a body that a transport writes as the response arrives.
    /// - Parameter limits: The limits it enforces (``Limits/maxStreamBacklogBytes``).
    /// - Returns: The body, for the ``StreamedResponse``, and its writer.
    public static func makeStream(limits: Limits = .default) -> (body: ResponseBody, writer: Writer) {
        let buffer = BodyBuffer(limits: limits)
        return (ResponseBody(buffer: buffer), Writer(buffer: buffer))
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(token: buffer.claim() ? AsyncIterator.Token(handle) : nil)
    }

    /// Reads the chunks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = Data
        public typealias Failure = CourierError

        /// The one reader: when it goes (the loop ended early), the transfer is stopped.
        final class Token: Sendable {
            let handle: Handle

            init(_ handle: Handle) {
                self.handle = handle
            }

            deinit {
                handle.buffer.terminate()
            }
        }

        private let token: Token?

        init(token: Token?) {
            self.token = token
        }

        /// The next chunk, as it arrives; `nil` at the end of the body.
        /// - Throws: ``CourierError/cancelled`` when the reading task is cancelled,
        ///   ``CourierError/timedOut(_:)`` when an idle or total deadline passes,
        ///   ``CourierError/limitExceeded(_:)``, the transfer's error, or
        ///   ``CourierError/invalidUse(_:)`` for a second iterator.
        public mutating func next() async throws(CourierError) -> Data? {
            guard let token else { throw .invalidUse("a response body can be read once, by one task") }
            return try await token.handle.buffer.next()
        }

        /// The reader ends the body itself (see ``BodyBuffer/readerEnded(_:)``).
        func end(_ outcome: CourierError?) async {
            await token?.handle.buffer.readerEnded(outcome)
        }
    }

    /// Feeds a ``ResponseBody``: for transports. Writing never waits for the reader (past the
    /// memory window a chunk is written to the backlog file, on the writer's thread).
    public struct Writer: Sendable {
        let buffer: BodyBuffer

        /// Appends a chunk.
        /// - Returns: `false` when the reader has gone or a limit was crossed: stop the transfer.
        @discardableResult
        public func write(_ data: Data) -> Bool {
            buffer.write(data)
        }

        /// Ends the body.
        public func finish() {
            buffer.finish()
        }

        /// Ends the body with an error (wrapped in ``CourierError/underlying(_:_:)`` unless it is
        /// one).
        public func finish(throwing error: any Error) {
            buffer.finish(CourierError(error))
        }

        /// Whether the reader has gone (or a limit was crossed): nothing written is read.
        public var isTerminated: Bool { buffer.isTerminated }

        /// Runs `handler` once if the reader goes before the body ended: stop the transfer there.
        /// Runs it at once if the reader has gone already.
        public func onTermination(_ handler: @escaping @Sendable () -> Void) {
            buffer.onTermination(handler)
        }
    }
}

/// What ``Transport/stream(_:)`` returns: the response head, as soon as it arrives, and the body
/// that follows it.
public struct StreamedResponse: Sendable {
    /// The status, headers and request; its ``Response/data`` is empty unless the transport had
    /// the whole body already.
    public var head: Response
    /// The body, as it arrives.
    public var body: ResponseBody

    /// Creates a streamed response.
    public init(head: Response, body: ResponseBody) {
        self.head = head
        self.body = body
    }
}
