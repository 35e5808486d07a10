import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Provider {
    /// Server-Sent Events that survive dropped connections, as a browser's `EventSource` does:
    /// when the stream ends or the connection drops, it waits the reconnection time (the server's
    /// latest `retry`, or `reconnectionTime`, never less than `minimumReconnectionTime`) on the
    /// provider's clock and requests `target` again, with `Last-Event-ID` set to the last event ID
    /// seen (none while it is empty), so the server can resume.
    ///
    /// ```swift
    /// for try await event in provider.eventSource(.feed(room)) { show(event) }
    /// ```
    ///
    /// No server can make it reconnect in a storm. A connection that ends within 10 seconds of its
    /// request (on the provider's clock), delivers at most one event, or fails before its head is a
    /// failed connection: each one in a row doubles the wait (up to 60 seconds, or the reconnection
    /// time when that is longer), and after `maxReconnects` of them in a row the event source gives
    /// up. A connection that lasted and delivered events resets both, as does one that lasted five
    /// minutes without events (a quiet feed behind a proxy that closes idle connections). A server that answers
    /// `retry: 0` and closes at once is therefore asked again after 1, 2, 4, … 60 seconds, 10 times
    /// by default, and one that sends one event per connection cannot reset the count.
    ///
    /// It ends (returns `nil`) when the server answers `204 No Content`, and throws when the
    /// server refuses the request (a status the target's validation does not accept), on a limit,
    /// ``CourierError/cancelled`` when the iterating task is cancelled, and after `maxReconnects`
    /// failed connections in a row: the error that ended the last one, or
    /// ``LimitExceeded/reconnects(limit:)`` when the server closed it. Each connection is a
    /// ``stream(_:idleTimeout:totalTimeout:)`` call, so plugins, retries before the head, limits
    /// and deadlines apply to each.
    ///
    /// - Parameters:
    ///   - target: The event stream.
    ///   - reconnectionTime: The wait before reconnecting until the server sends `retry`.
    ///     Default: 3 seconds.
    ///   - minimumReconnectionTime: The shortest wait before reconnecting, whatever the server's
    ///     `retry` says (a negative value counts as zero). Default: 1 second.
    ///   - maxReconnects: Failed connections in a row before it gives up; `nil` for no limit (the
    ///     waits still grow to 60 seconds). Default: 10.
    ///   - idleTimeout: For each connection: the longest wait for the next chunk (a connection
    ///     that goes quiet counts as dropped). Default: `nil`.
    /// - Returns: The events, in order, across connections.
    public nonisolated func eventSource(
        _ target: Target, reconnectionTime: Duration = .seconds(3), minimumReconnectionTime: Duration = .seconds(1),
        maxReconnects: Int? = 10, idleTimeout: Duration? = nil
    ) -> EventSource<Target> {
        EventSource(
            provider: self, target: target,
            reconnection: EventSourceReconnection(
                reconnectionTime: reconnectionTime, minimumWait: minimumReconnectionTime, maxReconnects: maxReconnects),
            idleTimeout: idleTimeout)
    }
}

/// Server-Sent Events across reconnections: see
/// ``Provider/eventSource(_:reconnectionTime:minimumReconnectionTime:maxReconnects:idleTimeout:)``.
public struct EventSource<Target: TargetType>: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent
    public typealias Failure = CourierError

    let provider: Provider<Target>
    let target: Target
    let reconnection: EventSourceReconnection
    let idleTimeout: Duration?

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: self)
    }

    /// Reads the events, reconnecting as needed.
    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = ServerSentEvent
        public typealias Failure = CourierError

        let source: EventSource
        var reconnection: EventSourceReconnection
        var lastEventID: String?
        var events: ResponseStream.Events.AsyncIterator?
        /// The wait before the next connection, once one has ended.
        var wait: Duration?
        /// When the current connection was requested (the provider's elapsed time).
        var connectedAt: Duration = .zero
        /// The events the current connection delivered.
        var delivered = 0
        var finished = false

        init(source: EventSource) {
            self.source = source
            self.reconnection = source.reconnection
        }

        /// The next event; `nil` once the server answered `204 No Content`.
        public mutating func next() async throws(CourierError) -> ServerSentEvent? {
            while !finished {
                if Task.isCancelled { return try end(.cancelled) }
                if events == nil {
                    if let wait {
                        do {
                            try await source.provider.clock.sleep(for: wait.sleepable)
                        } catch {
                            return try end(.cancelled)
                        }
                        self.wait = nil
                    }
                    connectedAt = source.provider.elapsed()
                    delivered = 0
                    do {
                        let stream = try await source.provider.stream(
                            source.target, idleTimeout: source.idleTimeout,
                            // An empty last event ID sends no header (WHATWG).
                            headers: lastEventID.flatMap { $0.isEmpty ? nil : ["Last-Event-ID": $0] } ?? [:])
                        if stream.statusCode == 204 {
                            finished = true
                            return nil
                        }
                        var sequence = stream.events
                        sequence.lastEventID = lastEventID
                        events = sequence.makeAsyncIterator()
                    } catch {
                        guard Self.reconnects(after: error) else { return try end(error) }
                        try connectionEnded(headArrived: false, error)
                        continue
                    }
                }
                do {
                    let event = try await events?.next()
                    keepWhatTheStreamSaid()
                    if let event {
                        delivered += 1
                        return event
                    }
                    // The server ended the stream: reconnect.
                    events = nil
                    try connectionEnded(headArrived: true, nil)
                } catch {
                    keepWhatTheStreamSaid()
                    events = nil
                    guard Self.reconnects(after: error) else { return try end(error) }
                    try connectionEnded(headArrived: true, error)
                }
            }
            return nil
        }

        /// The server's latest `retry` and last event ID outlive its connection.
        private mutating func keepWhatTheStreamSaid() {
            if let time = events?.reconnectionTime { reconnection.reconnectionTime = time }
            lastEventID = events?.lastEventID ?? lastEventID
        }

        /// Decides the wait before the next connection, or gives up with `error` (the server's
        /// close, when `nil`, gives up with ``LimitExceeded/reconnects(limit:)``).
        private mutating func connectionEnded(headArrived: Bool, _ error: CourierError?) throws(CourierError) {
            let lasted = headArrived ? source.provider.elapsed() - connectedAt : nil
            switch reconnection.connectionEnded(lasted: lasted, events: delivered) {
            case .reconnect(let wait):
                self.wait = wait
            case .giveUp:
                _ = try end(error ?? .limitExceeded(.reconnects(limit: reconnection.maxReconnects ?? 0)))
            }
        }

        private mutating func end(_ error: CourierError) throws(CourierError) -> ServerSentEvent? {
            finished = true
            events = nil
            throw error
        }

        /// A dropped or timed-out connection is reconnected; a refused status, a limit, a misuse
        /// or a cancel is not. A connection whose retries (a retry policy's, before the head) ran
        /// out is judged by its last error: before, the first outage ended an event source that
        /// had a retry policy, where one without would have reconnected. Found by review.
        static func reconnects(after error: CourierError) -> Bool {
            switch error {
            case .underlying, .timedOut: !error.isCancellation
            case .retryLimitReached(_, let last): reconnects(after: last)
            default: false
            }
        }
    }
}
