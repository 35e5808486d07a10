/// What happened during one call, on every platform (FoundationNetworking has no
/// `URLSessionTaskMetrics`).
///
/// Times are durations since the call began, measured on the provider's clock, so tests with a
/// test clock can assert exact values. A successful response carries them (``Response/metrics``),
/// and so does the response inside an error (`error.response?.metrics`); every call, failed or
/// not, reports them to plugins' ``Plugin/didFinish(_:metrics:context:)``.
public struct RequestMetrics: Sendable, Hashable {
    /// One send to the transport or the stub.
    public struct Attempt: Sendable, Hashable {
        /// The retry policy's attempt number, from 1 (see ``RequestContext/attempt``).
        public var number: Int
        /// Whether this send repeats the previous one with a refreshed credential.
        public var afterRefresh: Bool
        /// Whether the sample response answered it (the target was stubbed).
        public var stubbed: Bool
        /// Whether it joined an identical request already in flight (``Deduplication``) instead of
        /// sending its own.
        public var joinedSharedRequest: Bool
        /// When it was handed to the transport or stub.
        public var start: Duration
        /// When the response head arrived, if the transport says (``TransferMetrics``).
        public var responseStart: Duration?
        /// When its result was known.
        public var end: Duration
        /// The status code, if a response arrived.
        public var statusCode: Int?
        /// What the transport reported about the exchange, if it did.
        public var transfer: TransferMetrics?
    }

    /// The call these are for.
    public var id: RequestID
    /// From the start of the call until its result was ready, `process` and `didFinish` aside.
    public var total: Duration = .zero
    /// Time in the endpoint and request mappings.
    public var mapping: Duration = .zero
    /// Time in plugin hooks (`prepare`, `willSend`, `didReceive`, `willRetry`, `process`).
    public var plugins: Duration = .zero
    /// Every send, in order.
    public var attempts: [Attempt] {
        get { (firstAttempt.map { [$0] } ?? []) + laterAttempts }
        set {
            firstAttempt = newValue.first
            laterAttempts = Array(newValue.dropFirst())
        }
    }
    // The first attempt is kept inline, so a call that is sent once allocates nothing for it.
    private var firstAttempt: Attempt?
    private var laterAttempts: [Attempt] = []
    /// The waits between attempts (``RetryPolicy``), as long as they really were.
    public var waits: [Duration] = []
    /// How many credential refreshes the call waited for (0 or 1).
    public var refreshes = 0
    /// Time spent refreshing the credential.
    public var refreshTime: Duration = .zero
    /// Traffic control (27): the attempts that waited in the provider's traffic queue or for a
    /// host's shared pause (``TrafficPolicy``), in order; empty when none did. Kept out of
    /// ``Attempt`` so the metrics stay small for calls without traffic control.
    public var trafficWaits: [TrafficWait] = []

    /// Whether any attempt joined a shared request in flight.
    public var joinedSharedRequest: Bool { attempts.contains { $0.joinedSharedRequest } }
    /// Bytes of request bodies sent, over all attempts that report it.
    public var bytesSent: Int64 { attempts.reduce(0) { $0 + ($1.transfer?.bytesSent ?? 0) } }
    /// Bytes of response bodies received, over all attempts that report it.
    public var bytesReceived: Int64 { attempts.reduce(0) { $0 + ($1.transfer?.bytesReceived ?? 0) } }
    /// Redirects followed, over the attempts whose transport reports them; `nil` when none does
    /// (unknown, not zero: a transport built on ``Transfer/sendBuffered(_:)`` cannot tell).
    public var redirects: Int? {
        attempts.reduce(nil) { total, attempt in
            guard let count = attempt.transfer?.redirects else { return total }
            return (total ?? 0) + count
        }
    }

    init(id: RequestID) {
        self.id = id
    }

    mutating func append(_ attempt: consuming Attempt) {
        guard case .some = firstAttempt else {
            firstAttempt = consume attempt
            return
        }
        laterAttempts.append(attempt)
    }
}

/// What a transport reports about one exchange (``Response/transferMetrics``).
public struct TransferMetrics: Sendable, Hashable {
    /// Request body bytes sent.
    public var bytesSent: Int64
    /// Response body bytes received (after decoding a compressed body).
    public var bytesReceived: Int64
    /// Redirects followed; `nil` when the transport does not say (it is not zero then: a client
    /// underneath may have followed some). Sample responses follow none (0).
    public var redirects: Int?
    /// When the response head arrived, read from ``Transfer/elapsed`` (the provider's clock).
    public var responseStart: Duration?
    /// The HTTP version used (``Response/httpVersion``), when the transport reports it.
    public var httpVersion: String?
    /// Where the response came from when the provider has an ``HTTPCache`` (``Response/cacheStatus``).
    public var cacheStatus: CacheStatus = .network  // HTTP cache (issue 26)
    // Issue 28 (connection details): the five properties below, their init parameters, and
    // TransferMetrics+URLSession.swift; SessionRouter's lines are marked with the same comment.
    /// Whether the request went over a connection that an earlier request opened; `nil` when the
    /// transport does not say. `URLSessionTransport` on Apple platforms reports it
    /// (`URLSessionTaskMetrics`); FoundationNetworking on Linux reports no task metrics at all
    /// (probed with Swift 6.3.1), and AsyncHTTPClient's async API (1.37) only the HTTP version.
    public var connectionReused: Bool?
    /// The server's IP address as the connection saw it; `nil` when the transport does not say
    /// (as for ``connectionReused``).
    public var remoteAddress: String?
    /// How long the DNS lookup took; `nil` when there was none (a reused connection, an IP
    /// address) or the transport does not say (as for ``connectionReused``).
    public var domainLookup: Duration?
    /// How long opening the connection took, TLS handshake included; `nil` when no connection was
    /// opened or the transport does not say (as for ``connectionReused``).
    public var connect: Duration?
    /// How long the TLS handshake took; `nil` without TLS, on a reused connection, or when the
    /// transport does not say (as for ``connectionReused``).
    public var secureConnection: Duration?

    /// Creates transfer metrics; every connection detail defaults to `nil` (not reported).
    /// - Parameters:
    ///   - bytesSent: Request body bytes sent. Default: 0.
    ///   - bytesReceived: Response body bytes received, decoded. Default: 0.
    ///   - redirects: Redirects followed. Default: `nil` (unknown).
    ///   - responseStart: When the response head arrived. Default: `nil` (unknown).
    ///   - httpVersion: The HTTP version. Default: `nil` (unknown).
    ///   - connectionReused: Whether an earlier request's connection was used. Default: `nil`.
    ///   - remoteAddress: The server's IP address. Default: `nil`.
    ///   - domainLookup: How long the DNS lookup took. Default: `nil`.
    ///   - connect: How long opening the connection took. Default: `nil`.
    ///   - secureConnection: How long the TLS handshake took. Default: `nil`.
    public init(
        bytesSent: Int64 = 0, bytesReceived: Int64 = 0, redirects: Int? = nil, responseStart: Duration? = nil,
        httpVersion: String? = nil, connectionReused: Bool? = nil, remoteAddress: String? = nil,
        domainLookup: Duration? = nil, connect: Duration? = nil, secureConnection: Duration? = nil
    ) {
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.redirects = redirects
        self.responseStart = responseStart
        self.httpVersion = httpVersion
        self.connectionReused = connectionReused
        self.remoteAddress = remoteAddress
        self.domainLookup = domainLookup
        self.connect = connect
        self.secureConnection = secureConnection
    }
}

extension Response {
    /// This response with the call's metrics.
    func with(_ metrics: consuming RequestMetrics) -> Response {
        var response = self
        response.metrics = metrics
        return response
    }
}

extension CourierError {
    /// This error with the call's metrics on every response it carries.
    func with(_ metrics: RequestMetrics) -> CourierError {
        switch self {
        case .statusCode(let response): .statusCode(response.with(metrics))
        case .apiError(let error, let response): .apiError(error, response.with(metrics))
        case .jsonMapping(let error, let response): .jsonMapping(error, response.with(metrics))
        case .stringMapping(let response): .stringMapping(response.with(metrics))
        case .objectMapping(let error, let response): .objectMapping(error, response.with(metrics))
        case .underlying(let error, let response?): .underlying(error, response.with(metrics))
        case .retryLimitReached(let attempts, let lastError):
            .retryLimitReached(attempts: attempts, lastError: lastError.with(metrics))
        default: self
        }
    }
}
