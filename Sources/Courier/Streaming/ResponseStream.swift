import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response being read while it arrives, from ``Provider/stream(_:idleTimeout:totalTimeout:)``:
/// its head (already validated) and its body as chunks, lines or Server-Sent Events.
///
/// ```swift
/// let stream = try await provider.stream(.completion(prompt))
/// for try await event in stream.events {
///     if event.data == "[DONE]" { break }
///     print(try event.decode(Token.self).text, terminator: "")
/// }
/// ```
///
/// Read the body once, in one of its forms, from one task: a second reader gets
/// ``CourierError/invalidUse(_:)``. Cancelling the reading task, leaving the loop early or dropping
/// the stream unread ends the transfer and closes its connection.
public struct ResponseStream: Sendable {
    /// The response head: status, headers, the request that was sent; its `data` is empty.
    public let head: Response
    /// The body's chunks, as they arrive.
    public let chunks: ResponseBody
    let limits: Limits

    init(head: Response, body: ResponseBody, limits: Limits) {
        self.head = head
        self.chunks = body
        self.limits = limits
    }

    /// The HTTP status code.
    public var statusCode: Int { head.statusCode }
    /// The HTTP response, with its headers.
    public var response: HTTPURLResponse? { head.response }

    /// The body as text lines (UTF-8, invalid bytes replaced), split at LF, CRLF or CR, without
    /// their endings. A last line without an ending is included. Lines are bounded by
    /// ``Limits/maxLineBytes``.
    public var lines: Lines { Lines(body: chunks, maxLineBytes: Int(clamping: limits.maxLineBytes)) }

    /// The body as Server-Sent Events (`text/event-stream`), parsed by the WHATWG rules: see
    /// ``ServerSentEvent``. An event's data is bounded by ``Limits/maxLineBytes``.
    public var events: Events { Events(body: chunks, maxBytes: Int(clamping: limits.maxLineBytes)) }

    /// Decodes each non-empty line as JSON (JSON Lines, NDJSON).
    /// - Parameters:
    ///   - type: The type of each line.
    ///   - decoder: The decoder. Default: a plain `JSONDecoder`.
    /// - Returns: The values, in order; a line that does not decode ends the sequence with
    ///   ``CourierError/underlying(_:_:)``.
    public func decodeLines<T: Decodable>(
        _ type: T.Type, using decoder: JSONDecoder = JSONDecoder()
    ) -> Decoded<T> {
        Decoded(source: .lines(lines), sentinel: nil, decoder: decoder)
    }

    /// Decodes the data of each event as JSON, until an event whose data is `sentinel` (such as
    /// `"[DONE]"`), which ends the sequence and the transfer.
    /// - Parameters:
    ///   - type: The type of each event's data.
    ///   - sentinel: Data that ends the stream, or `nil` to read to the end. Default: `nil`.
    ///   - decoder: The decoder. Default: a plain `JSONDecoder`.
    /// - Returns: The values, in order; data that does not decode ends the sequence with
    ///   ``CourierError/underlying(_:_:)``.
    public func decodeEvents<T: Decodable>(
        _ type: T.Type, until sentinel: String? = nil, using decoder: JSONDecoder = JSONDecoder()
    ) -> Decoded<T> {
        Decoded(source: .events(events), sentinel: sentinel, decoder: decoder)
    }

    /// Values decoded from the lines or the events of a stream: see ``decodeLines(_:using:)`` and
    /// ``decodeEvents(_:until:using:)``.
    public struct Decoded<T: Decodable>: AsyncSequence, Sendable {
        public typealias Element = T
        public typealias Failure = CourierError

        enum Source: Sendable {
            case lines(Lines)
            case events(Events)
        }

        let source: Source
        let sentinel: String?
        let decoder: JSONDecoder

        public func makeAsyncIterator() -> AsyncIterator {
            switch source {
            case .lines(let lines):
                AsyncIterator(lines: lines.makeAsyncIterator(), sentinel: sentinel, decoder: decoder)
            case .events(let events):
                AsyncIterator(events: events.makeAsyncIterator(), sentinel: sentinel, decoder: decoder)
            }
        }

        /// Reads the values.
        public struct AsyncIterator: AsyncIteratorProtocol {
            public typealias Element = T
            public typealias Failure = CourierError

            var lines: Lines.AsyncIterator?
            var events: Events.AsyncIterator?
            let sentinel: String?
            let decoder: JSONDecoder
            var ended = false

            init(lines: Lines.AsyncIterator, sentinel: String?, decoder: JSONDecoder) {
                self.lines = lines
                self.sentinel = sentinel
                self.decoder = decoder
            }

            init(events: Events.AsyncIterator, sentinel: String?, decoder: JSONDecoder) {
                self.events = events
                self.sentinel = sentinel
                self.decoder = decoder
            }

            /// The next value; `nil` at the end of the body or at the sentinel.
            public mutating func next() async throws(CourierError) -> T? {
                while !ended {
                    let text: String?
                    if lines != nil {
                        text = try await lines?.next()
                    } else {
                        text = try await events?.next()?.data
                    }
                    guard let text else { break }
                    if let sentinel, text == sentinel {
                        // The stream's own end: the call ends as a success, not as a reader
                        // that left early.
                        await lines?.end(nil)
                        await events?.end(nil)
                        break
                    }
                    if lines != nil, text.allSatisfy(\.isWhitespace) { continue }
                    do {
                        return try decoder.decode(T.self, from: Data(text.utf8))
                    } catch {
                        let failure = CourierError.underlying(error, nil)
                        // The call ends with the decoding error, before it is thrown.
                        await lines?.end(failure)
                        await events?.end(failure)
                        ended = true
                        lines = nil
                        events = nil
                        throw failure
                    }
                }
                // The end, or the sentinel: the transfer is over (dropping the iterators closes it).
                ended = true
                lines = nil
                events = nil
                return nil
            }
        }
    }

    /// The body as text lines: see ``ResponseStream/lines``.
    public struct Lines: AsyncSequence, Sendable {
        public typealias Element = String
        public typealias Failure = CourierError

        let body: ResponseBody
        let maxLineBytes: Int

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(chunks: body.makeAsyncIterator(), decoder: LineDecoder(maxLineBytes: maxLineBytes))
        }

        /// Reads the lines.
        public struct AsyncIterator: AsyncIteratorProtocol {
            public typealias Element = String
            public typealias Failure = CourierError

            var chunks: ResponseBody.AsyncIterator
            var decoder: LineDecoder
            /// The chunk being read, one line at a time, and where in it.
            var chunk: Data?
            var offset = 0
            var ended = false
            /// The error that ended the lines: every later read throws it again (a line over the
            /// limit was followed by an empty one, and the rest of the body, found by review).
            var failure: CourierError?

            /// The next line; `nil` at the end of the body. After an error, every later call
            /// throws it again.
            public mutating func next() async throws(CourierError) -> String? {
                if let failure { throw failure }
                do throws(CourierError) {
                    return try await nextLine()
                } catch {
                    failure = error
                    throw error
                }
            }

            /// Ends the body from the reader's side (see ``ResponseBody/AsyncIterator/end(_:)``).
            mutating func end(_ outcome: CourierError?) async {
                if let outcome { failure = outcome }
                await chunks.end(outcome)
            }

            private mutating func nextLine() async throws(CourierError) -> String? {
                while true {
                    if let current = chunk {
                        // A reader cancelled between lines gets no more of the chunk: the body's
                        // next read answers `cancelled` (and ends the transfer), as between chunks.
                        let line: [UInt8]?
                        do throws(CourierError) {
                            line = Task.isCancelled ? nil : try decoder.nextLine(in: current, at: &offset)
                        } catch {
                            // A line over the limit: the transfer stops, and the call ends with
                            // the limit before the reader gets it.
                            await chunks.end(error)
                            throw error
                        }
                        if let line { return String(decoding: line, as: UTF8.self) }
                        chunk = nil
                    }
                    if ended { return nil }
                    if let next = try await chunks.next() {
                        chunk = next
                        offset = 0
                    } else {
                        ended = true
                        if let last = decoder.finish() { return String(decoding: last, as: UTF8.self) }
                    }
                }
            }
        }
    }

    /// The body as Server-Sent Events: see ``ResponseStream/events``.
    public struct Events: AsyncSequence, Sendable {
        public typealias Element = ServerSentEvent
        public typealias Failure = CourierError

        let body: ResponseBody
        let maxBytes: Int
        /// The last event ID the stream starts from (an event source that reconnected).
        var lastEventID: String?

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(
                chunks: body.makeAsyncIterator(), lines: LineDecoder(maxLineBytes: maxBytes),
                parser: ServerSentEventParser(maxEventBytes: maxBytes, lastEventID: lastEventID))
        }

        /// Reads the events.
        public struct AsyncIterator: AsyncIteratorProtocol {
            public typealias Element = ServerSentEvent
            public typealias Failure = CourierError

            var chunks: ResponseBody.AsyncIterator
            var lines: LineDecoder
            var parser: ServerSentEventParser
            /// The chunk being read, one line at a time, and where in it.
            var chunk: Data?
            var offset = 0
            /// The error that ended the events: every later read throws it again. A reader that
            /// went on after an event over the limit got that event without the line that crossed
            /// the limit, as if it were whole.
            var failure: CourierError?

            /// The reconnection time the stream asked for (`retry`), if it did.
            var reconnectionTime: Duration? { parser.reconnectionTime }
            /// The last event ID so far.
            var lastEventID: String? { parser.lastEventID }

            /// The next event; `nil` at the end of the body (an event without its closing blank
            /// line is dropped, as EventSource does). After an error, every later call throws it
            /// again.
            public mutating func next() async throws(CourierError) -> ServerSentEvent? {
                if let failure { throw failure }
                do throws(CourierError) {
                    return try await nextEvent()
                } catch {
                    failure = error
                    throw error
                }
            }

            /// Ends the body from the reader's side (see ``ResponseBody/AsyncIterator/end(_:)``).
            mutating func end(_ outcome: CourierError?) async {
                if let outcome { failure = outcome }
                await chunks.end(outcome)
            }

            private mutating func nextEvent() async throws(CourierError) -> ServerSentEvent? {
                while true {
                    if let current = chunk {
                        // Cancelled between lines: the body's next read answers `cancelled`.
                        do throws(CourierError) {
                            while !Task.isCancelled, let line = try lines.nextLine(in: current, at: &offset) {
                                if let event = try parser.consume(line) { return event }
                            }
                        } catch {
                            // A line or event over the limit: the transfer stops, and the call
                            // ends with the limit before the reader gets it.
                            await chunks.end(error)
                            throw error
                        }
                        chunk = nil
                    }
                    guard let next = try await chunks.next() else { return nil }
                    chunk = next
                    offset = 0
                }
            }
        }
    }
}
