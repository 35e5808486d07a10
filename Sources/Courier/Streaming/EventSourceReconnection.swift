/// When an event source reconnects and when it gives up: a pure state machine fed the end of each
/// connection, so that no server can make it reconnect in a storm.
///
/// - Every wait is at least the floor (`minimumWait`), whatever `retry` the server sends.
/// - A connection that ends within ``stableConnectionTime`` of its start, or after at most one
///   event, or that fails before its head, is a *failed* connection. Each failed connection in a
///   row doubles the wait (up to ``maximumWait``, or the reconnection time when that is longer), and
///   after `maxReconnects` of them in a row the event source gives up.
/// - Any other connection (it lasted and delivered events, or it lasted ``longLivedConnectionTime``
///   even without events, as a quiet feed does behind a proxy that closes idle connections) resets
///   both. A server can then make it reconnect at most once per that time: no storm.
struct EventSourceReconnection: Sendable, Hashable {
    /// How long a connection must last (on the provider's clock) to count as established.
    static let stableConnectionTime: Duration = .seconds(10)
    /// How long a connection must last to count as established even if it delivered no event.
    static let longLivedConnectionTime: Duration = .seconds(300)
    /// The most the back-off grows the wait to (a longer reconnection time is still waited).
    static let maximumWait: Duration = .seconds(60)
    /// The least a doubled wait is: a wait of zero (or a few nanoseconds) doubles to next to
    /// nothing, so without it a zero floor and `retry: 0` reconnected without waiting, for ever
    /// when there is no `maxReconnects`.
    static let minimumBackoff: Duration = .milliseconds(100)

    enum Action: Sendable, Hashable {
        /// Reconnect after this wait.
        case reconnect(after: Duration)
        /// Stop: `maxReconnects` failed connections in a row.
        case giveUp
    }

    /// The wait asked for: the server's latest `retry`, or the configured reconnection time.
    var reconnectionTime: Duration
    /// The floor of every wait (never negative).
    let minimumWait: Duration
    /// Failed connections in a row before giving up; `nil` for no limit.
    let maxReconnects: Int?
    /// Failed connections in a row so far.
    private(set) var failures = 0

    init(reconnectionTime: Duration, minimumWait: Duration, maxReconnects: Int?) {
        self.reconnectionTime = reconnectionTime
        self.minimumWait = max(.zero, minimumWait)
        self.maxReconnects = maxReconnects.map { max(0, $0) }
    }

    /// A connection ended (cleanly or with an error worth reconnecting after).
    /// - Parameters:
    ///   - lasted: How long it lasted, from its request; `nil` when it failed before its head.
    ///   - events: The events it delivered.
    /// - Returns: What to do next.
    mutating func connectionEnded(lasted: Duration?, events: Int) -> Action {
        if let lasted,
            lasted >= Self.longLivedConnectionTime || (lasted >= Self.stableConnectionTime && events >= 2)
        {
            failures = 0
        } else {
            failures += 1
            if let maxReconnects, failures > maxReconnects { return .giveUp }
        }
        return .reconnect(after: wait)
    }

    /// The wait before the next connection: the reconnection time, at least the floor, doubled
    /// (to at least ``minimumBackoff``) for each failed connection in a row after the first, within
    /// ``maximumWait``.
    var wait: Duration {
        let base = max(reconnectionTime, minimumWait)
        let cap = max(Self.maximumWait, base)
        var wait = base
        var doublings = failures - 1
        while doublings > 0, wait < cap {
            // `wait < cap` and `cap` is at most what a stream can ask for, so this never overflows.
            wait = min(max(wait * 2, Self.minimumBackoff), cap)
            doublings -= 1
        }
        return wait
    }
}
