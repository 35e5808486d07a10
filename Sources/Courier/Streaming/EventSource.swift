import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Provider {
    /// Server-Sent Events that survive dropped connections, as a browser's `EventSource` does:
    /// when the stream ends or the connection drops, it waits the reconnection time (the server's
    /// latest `retry`, or `reconnectionTime`) on the provider's clock and requests `target` again,
    /// with `Last-Event-ID` set to the last event ID seen, so the server can resume.
    ///
    /// ```swift
    /// for try await event in provider.eventSource(.feed(room)) { show(event) }
    /// ```
    ///
    /// It ends (returns `nil`) when the server answers `204 No Content`, and throws when the
    /// server refuses the request (a status the target's validation does not accept), on a limit,
    /// after `maxReconnects` reconnections in a row without an event, or
    /// ``CourierError/cancelled`` when the iterating task is cancelled. Each connection is a
    /// ``stream(_:idleTimeout:totalTimeout:)`` call, so plugins, retries before the head, limits
    /// and deadlines apply to each.
    ///
    /// - Parameters:
    ///   - target: The event stream.
    ///   - reconnectionTime: The wait before reconnecting until the server sends `retry`.
    ///     Default: 3 seconds.
    ///   - maxReconnects: Reconnections in a row without an event before it gives up with the
    ///     last error; `nil` for no limit. Default: `nil`.
    ///   - idleTimeout: For each connection: the longest wait for the next chunk (a connection
    ///     that goes quiet counts as dropped). Default: `nil`.
    /// - Returns: The events, in order, across connections.
    public nonisolated func eventSource(
        _ target: Target, reconnectionTime: Duration = .seconds(3), maxReconnects: Int? = nil,
        idleTimeout: Duration? = nil
    ) -> EventSource<Target> {
        EventSource(
            provider: self, target: target, reconnectionTime: reconnectionTime, maxReconnects: maxReconnects,
            idleTimeout: idleTimeout)
    }
}

/// Server-Sent Events across reconnections: see ``Provider/eventSource(_:reconnectionTime:maxReconnects:idleTimeout:)``.
public struct EventSource<Target: TargetType>: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent
    public typealias Failure = CourierError

    let provider: Provider<Target>
    let target: Target
    let reconnectionTime: Duration
    let maxReconnects: Int?
    let idleTimeout: Duration?

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: self, reconnectionTime: reconnectionTime)
    }

    /// Reads the events, reconnecting as needed.
    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = ServerSentEvent
        public typealias Failure = CourierError

        let source: EventSource
        var reconnectionTime: Duration
        var lastEventID: String?
        var events: ResponseStream.Events.AsyncIterator?
        /// Connections since the last event.
        var failures = 0
        var connected = false
        var finished = false

        init(source: EventSource, reconnectionTime: Duration) {
            self.source = source
            self.reconnectionTime = reconnectionTime
        }

        /// The next event; `nil` once the server answered `204 No Content`.
        public mutating func next() async throws(CourierError) -> ServerSentEvent? {
            while !finished {
                if Task.isCancelled { return try end(.cancelled) }
                if events == nil {
                    if connected {
                        do {
                            try await source.provider.clock.sleep(for: reconnectionTime)
                        } catch {
                            return try end(.cancelled)
                        }
                    }
                    connected = true
                    do {
                        let stream = try await source.provider.stream(
                            source.target, idleTimeout: source.idleTimeout,
                            headers: lastEventID.map { ["Last-Event-ID": $0] } ?? [:])
                        if stream.statusCode == 204 {
                            finished = true
                            return nil
                        }
                        var sequence = stream.events
                        sequence.lastEventID = lastEventID
                        events = sequence.makeAsyncIterator()
                    } catch {
                        guard Self.reconnects(after: error) else { return try end(error) }
                        failures += 1
                        if let max = source.maxReconnects, failures > max { return try end(error) }
                        continue
                    }
                }
                do {
                    let event = try await events?.next()
                    if let time = events?.reconnectionTime { reconnectionTime = time }
                    lastEventID = events?.lastEventID ?? lastEventID
                    if let event {
                        failures = 0
                        return event
                    }
                    // The server ended the stream: reconnect.
                    events = nil
                    failures += 1
                } catch {
                    if let time = events?.reconnectionTime { reconnectionTime = time }
                    lastEventID = events?.lastEventID ?? lastEventID
                    events = nil
                    guard Self.reconnects(after: error) else { return try end(error) }
                    failures += 1
                    if let max = source.maxReconnects, failures > max { return try end(error) }
                }
            }
            return nil
        }

        private mutating func end(_ error: CourierError) throws(CourierError) -> ServerSentEvent? {
            finished = true
            events = nil
            throw error
        }

        /// A dropped or timed-out connection is reconnected; a refused status, a limit, a misuse
        /// or a cancel is not.
        static func reconnects(after error: CourierError) -> Bool {
            switch error {
            case .underlying, .timedOut: !error.isCancellation
            default: false
            }
        }
    }
}
