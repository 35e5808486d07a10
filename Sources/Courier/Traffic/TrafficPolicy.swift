/// How many requests a provider keeps in flight, how long waiting calls age, and how long a
/// server's `Retry-After` may pause new sends to its host.
///
/// ```swift
/// let provider = Provider<API>(traffic: TrafficPolicy(maxRequests: 16, maxRequestsPerHost: 4))
/// ```
///
/// A call that finds the limits reached waits in the provider's queue, holding no connection and
/// no task beyond its own, until a slot frees; waiting calls are served by priority
/// (``TrafficClass/priority``), oldest first within a priority, and a waiting call rises one
/// priority every ``agingInterval`` so that low-priority calls never starve. A call whose task is
/// cancelled or whose deadline passes leaves the queue at once and never takes a slot. See
/// <doc:Traffic>.
public struct TrafficPolicy: Sendable, Hashable {
    /// The most requests in flight at once, over every host. `nil`: no limit. Default: 64.
    public var maxRequests: Int?
    /// The most requests in flight at once to one host (`scheme://host:port`). `nil`: no limit.
    /// Default: 6.
    public var maxRequestsPerHost: Int?
    /// How long a call waits before it is served as if its priority were one step higher.
    /// Default: 2 seconds.
    public var agingInterval: Duration
    /// The longest pause a `Retry-After` (on a 429 or 503) may put on new sends to its host, for
    /// every caller of the provider. `nil` or zero: responses never pause the host (each call's
    /// ``RetryPolicy`` still honours the header on its own). Default: 60 seconds.
    public var maxPause: Duration?
    /// The most calls that may wait for a slot at once; one more fails at once with
    /// ``CourierError/limitExceeded(_:)`` (``LimitExceeded/trafficQueue(limit:)``). Default: 10,000.
    public var maxQueuedRequests: Int

    /// Creates a policy.
    /// - Parameters:
    ///   - maxRequests: The most requests in flight at once. Default: 64. `nil`: no limit.
    ///   - maxRequestsPerHost: The most requests in flight at once per host. Default: 6. `nil`:
    ///     no limit.
    ///   - agingInterval: How long a waiting call waits to rise one priority. Default: 2 seconds.
    ///   - maxPause: The longest shared pause a `Retry-After` can set. Default: 60 seconds.
    ///     `nil`: no shared pause.
    ///   - maxQueuedRequests: The most calls waiting at once. Default: 10,000.
    public init(
        maxRequests: Int? = 64, maxRequestsPerHost: Int? = 6, agingInterval: Duration = .seconds(2),
        maxPause: Duration? = .seconds(60), maxQueuedRequests: Int = 10_000
    ) {
        self.maxRequests = maxRequests
        self.maxRequestsPerHost = maxRequestsPerHost
        self.agingInterval = agingInterval
        self.maxPause = maxPause
        self.maxQueuedRequests = maxQueuedRequests
    }

    /// 64 requests in flight, 6 per host, 2-second aging, pauses of up to 60 seconds.
    public static let `default` = TrafficPolicy()
}
