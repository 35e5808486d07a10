import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends requests for targets: target → endpoint → `URLRequest` → plugins → transport or stub →
/// validation → plugins → ``Response``.
///
/// ```swift
/// let provider = Provider<GitHub>()
/// let user = try await provider.request(.user("octocat")).map(User.self)
/// ```
///
/// The provider is an actor that holds state, never work: mapping, encoding, plugins and I/O run
/// on the calling task, so concurrent requests really run concurrently. Everything it is made with
/// (stubs, transport, clock, plugins) belongs to this provider alone, so tests that each make their
/// own provider can run in parallel without seeing each other.
///
/// Actor hops and locks per request (issue 29; Benchmarks/RESULTS.md, "Where the time goes"):
/// ``request(_:)`` and the other entry points are `nonisolated` (they leave the caller's actor,
/// the main actor included), and every pipeline stage is `nonisolated(nonsending)` (it runs where
/// the entry point runs, with no executor check of its own), so a request never enters the
/// provider's actor unless it is de-duplicated. With ``Deduplication/disabled`` (the default) and no
/// deadline, one request takes **no actor hop and no lock** in Courier (a relaxed atomic increment
/// numbers it; a stubbed request runs as one job, without suspending); the transport's own
/// hand-offs are the only ones. A de-duplicated request takes two actor steps (join, and the
/// shared exchange's completion), one task for the shared exchange, and one lock (``RequestMetrics``'
/// `joinedSharedRequest` flag). Each deadline (`timeout`, `callTimeout`) adds one task for the
/// operation it bounds and about five short lock acquisitions (the timer's schedule and cancel,
/// the race's state), never an actor hop. Traffic control, when it is on, adds two short lock
/// acquisitions to a call that finds a free slot (the slot taken and given back).
public actor Provider<Target: TargetType> {
    /// Turns a target into an endpoint. May suspend and may throw.
    public typealias EndpointClosure = @Sendable (Target) async throws -> Endpoint
    /// Turns an endpoint into a request. May suspend (e.g. to fetch a token) and may throw.
    public typealias RequestClosure = @Sendable (Endpoint) async throws -> URLRequest
    /// Decides, per target, whether to answer from the sample response.
    public typealias StubClosure = @Sendable (Target) -> StubBehavior

    /// The endpoint mapping.
    public nonisolated let endpointClosure: EndpointClosure
    /// The request mapping.
    public nonisolated let requestClosure: RequestClosure
    /// Whether each mapping is the default one (no closure given): the pipeline then calls it
    /// directly, with no async closure call (issue 29: the two cost ≈ 1,550 instructions a request).
    nonisolated let mapsByDefault: (endpoints: Bool, requests: Bool)
    /// The stub decision.
    public nonisolated let stubClosure: StubClosure
    /// The transport real requests go through.
    public nonisolated let transport: any Transport
    /// The plugins, in the order their hooks run.
    public nonisolated let plugins: [any Plugin]
    /// The plugins that implement each hook (``Plugin/implementedHooks``): the pipeline calls only those.
    nonisolated let hooked: PluginsByHook
    /// The clock for stub delays and deadlines.
    public nonisolated let clock: any Clock<Duration>
    /// The deadline for each attempt (sending and receiving, once), unless its target sets one
    /// (``TargetType/timeout``); retries get one each (``callTimeout`` bounds the whole call).
    /// `nil`: none beyond the transport's own idle timeout.
    public nonisolated let timeout: Duration?
    /// The deadline for the whole call, unless its target sets one (``TargetType/callTimeout``):
    /// mappings, plugins, signing and credential refresh, every attempt and every wait between
    /// attempts. When it passes the caller gets ``CourierError/timedOut(_:)`` at once, even from a
    /// mapping or plugin that never returns (that work is cancelled and left to end on its own).
    /// `nil`: none.
    public nonisolated let callTimeout: Duration?
    /// The limits on bodies, decompression, redirects and schemes, unless a target sets its own
    /// (``TargetType/limits``).
    public nonisolated let limits: Limits
    /// Every deadline of this provider, on its clock.
    nonisolated let deadlines: any DeadlineScheduling
    /// The time since the provider was made, on its clock: what metrics are measured with.
    nonisolated let elapsed: @Sendable () -> Duration
    /// Numbers the calls (``RequestContext/id``).
    nonisolated let requestIDs = RequestIDSource()
    /// The plan of every buffered call whose target overrides none of the settings above (see
    /// ``plan(_:mode:headers:)``).
    nonisolated let sharedPlan: CallPlan
    /// Which identical in-flight requests are merged, unless a target says otherwise
    /// (``TargetType/deduplication``).
    public nonisolated let deduplication: Deduplication
    /// When failed requests are sent again, unless a target says otherwise (``TargetType/retryPolicy``).
    public nonisolated let retryPolicy: RetryPolicy
    /// How API error bodies are read when validation refuses a response, unless a target says
    /// otherwise (``TargetType/errorBody``). `nil`: they are not (the error is
    /// ``CourierError/statusCode(_:)``).
    public nonisolated let errorBody: ErrorBody?
    /// Signs requests and refreshes the credential when the server refuses it (an
    /// ``Authentication``).
    nonisolated let authentication: (any RequestAuthentication)?
    /// The HTTP cache, if any (``HTTPCache``); each target's ``TargetType/cachePolicy`` says how it is used.
    public nonisolated let cache: HTTPCache?  // HTTP cache (issue 26)
    /// Traffic control (27): limits on requests in flight, priorities and shared pauses. `nil`: none.
    nonisolated let trafficControl: TrafficController?
    /// Traffic control (27): the limits on requests in flight (see <doc:Traffic>). `nil`: none.
    public nonisolated var traffic: TrafficPolicy? { trafficControl?.policy }
    /// Durable downloads (27): the partial files kept for downloads that resume.
    nonisolated let partialDownloads = PartialDownloads()

    /// Requests in flight that others may join, by their prepared request. Only the actor touches
    /// it: joining, completing and leaving are each one step on the actor, so no caller can slip
    /// in after the answer went out and wait forever.
    var inflight: [InflightKey: InflightEntry] = [:]
    /// Numbers in-flight entries, so a late answer never reaches a newer entry with the same key.
    var nextInflightID: UInt64 = 0
    /// Told the number of callers waiting on shared requests each time one joins: a seam for
    /// tests, which wait on it instead of polling (Tests/CourierTests/Support). `nil`: nobody asks.
    var inflightWaitersJoined: (@Sendable (Int) -> Void)?

    /// How many merged requests are in flight (entries in the de-duplication table), for tests and
    /// metrics. `0` when nothing is shared.
    public var inflightCount: Int { inflight.count }

    /// How many callers are waiting on merged requests in flight.
    public var inflightWaiterCount: Int { inflight.values.reduce(0) { $0 + $1.waiters.count } }

    /// Creates a provider.
    /// - Parameters:
    ///   - endpointClosure: Target to endpoint. Default: `nil`, ``defaultEndpointMapping(for:)``.
    ///   - requestClosure: Endpoint to request. Default: `nil`, ``defaultRequestMapping(for:)``.
    ///   - stubClosure: Whether to stub each target. Default: ``neverStub(_:)`` (always the network).
    ///   - transport: Where real requests go. Default: a new ``URLSessionTransport``.
    ///   - plugins: Hooks, run in this order. Default: none.
    ///   - clock: The clock for stub delays and deadlines. Default: `ContinuousClock()`.
    ///   - timeout: The deadline for sending and receiving each request; zero or less: every
    ///     attempt times out unsent. Default: `nil` (none).
    ///   - callTimeout: The deadline for the whole call, retries and refreshes included; zero or
    ///     less: the call times out and sends nothing. Default: `nil` (none).
    ///   - limits: Body sizes, decompression ratio, redirects and allowed schemes. Default:
    ///     ``Limits/default``.
    ///   - deduplication: Which identical requests in flight are merged. Default:
    ///     ``Deduplication/disabled``.
    ///   - retryPolicy: When failed requests are sent again. Default: ``RetryPolicy/disabled``.
    ///   - errorBody: How API error bodies become ``CourierError/apiError(_:_:)``. Default: `nil`.
    ///   - traffic: Limits on requests in flight, priorities and shared `Retry-After` pauses
    ///     (<doc:Traffic>). Default: `nil` (none: every call is sent at once).
    ///   - cache: An HTTP cache (``HTTPCache``). Default: `nil` (none).
    public init(
        endpointClosure: EndpointClosure? = nil,
        requestClosure: RequestClosure? = nil,
        stubClosure: @escaping StubClosure = Provider.neverStub(_:),
        transport: any Transport = URLSessionTransport(),
        plugins: [any Plugin] = [],
        clock: any Clock<Duration> = ContinuousClock(),
        timeout: Duration? = nil,
        callTimeout: Duration? = nil,
        limits: Limits = .default,
        deduplication: Deduplication = .disabled,
        retryPolicy: RetryPolicy = .disabled,
        errorBody: ErrorBody? = nil,
        traffic: TrafficPolicy? = nil,  // Traffic control (27)
        cache: HTTPCache? = nil  // HTTP cache (issue 26)
    ) {
        self.init(
            endpointClosure: endpointClosure, requestClosure: requestClosure, stubClosure: stubClosure,
            transport: transport, plugins: plugins, clock: clock, timeout: timeout, callTimeout: callTimeout,
            limits: limits, deduplication: deduplication, retryPolicy: retryPolicy, errorBody: errorBody, signer: nil,
            traffic: traffic, cache: cache)
    }

    /// Creates a provider whose requests are signed by `authentication`, which refreshes the
    /// credential when the server refuses it.
    /// - Parameters:
    ///   - endpointClosure: Target to endpoint. Default: `nil`, ``defaultEndpointMapping(for:)``.
    ///   - requestClosure: Endpoint to request. Default: `nil`, ``defaultRequestMapping(for:)``.
    ///   - stubClosure: Whether to stub each target. Default: ``neverStub(_:)`` (always the network).
    ///   - transport: Where real requests go. Default: a new ``URLSessionTransport``.
    ///   - plugins: Hooks, run in this order. Default: none.
    ///   - clock: The clock for stub delays and deadlines. Default: `ContinuousClock()`.
    ///   - timeout: The deadline for sending and receiving each request; zero or less: every
    ///     attempt times out unsent. Default: `nil` (none).
    ///   - callTimeout: The deadline for the whole call, retries and refreshes included; zero or
    ///     less: the call times out and sends nothing. Default: `nil` (none).
    ///   - limits: Body sizes, decompression ratio, redirects and allowed schemes. Default:
    ///     ``Limits/default``.
    ///   - deduplication: Which identical requests in flight are merged. Default:
    ///     ``Deduplication/disabled``.
    ///   - retryPolicy: When failed requests are sent again. Default: ``RetryPolicy/disabled``.
    ///   - errorBody: How API error bodies become ``CourierError/apiError(_:_:)``. Default: `nil`.
    ///   - traffic: Limits on requests in flight, priorities and shared `Retry-After` pauses
    ///     (<doc:Traffic>). Default: `nil` (none: every call is sent at once).
    ///   - authentication: Signs requests with a shared credential and refreshes it when refused
    ///     (``Authentication``); `nil`: requests are sent unsigned, as with the initializer without
    ///     it (so an optional authentication needs no unwrapping).
    ///   - cache: An HTTP cache (``HTTPCache``). Default: `nil` (none).
    public init<A: Authenticator>(
        endpointClosure: EndpointClosure? = nil,
        requestClosure: RequestClosure? = nil,
        stubClosure: @escaping StubClosure = Provider.neverStub(_:),
        transport: any Transport = URLSessionTransport(),
        plugins: [any Plugin] = [],
        clock: any Clock<Duration> = ContinuousClock(),
        timeout: Duration? = nil,
        callTimeout: Duration? = nil,
        limits: Limits = .default,
        deduplication: Deduplication = .disabled,
        retryPolicy: RetryPolicy = .disabled,
        errorBody: ErrorBody? = nil,
        traffic: TrafficPolicy? = nil,  // Traffic control (27)
        authentication: Authentication<A>?,
        cache: HTTPCache? = nil  // HTTP cache (issue 26)
    ) {
        self.init(
            endpointClosure: endpointClosure, requestClosure: requestClosure, stubClosure: stubClosure,
            transport: transport, plugins: plugins, clock: clock, timeout: timeout, callTimeout: callTimeout,
            limits: limits, deduplication: deduplication, retryPolicy: retryPolicy, errorBody: errorBody,
            signer: authentication, traffic: traffic, cache: cache)
    }

    private init(
        endpointClosure: EndpointClosure?, requestClosure: RequestClosure?,
        stubClosure: @escaping StubClosure, transport: any Transport, plugins: [any Plugin],
        clock: any Clock<Duration>, timeout: Duration?, callTimeout: Duration?, limits: Limits,
        deduplication: Deduplication, retryPolicy: RetryPolicy, errorBody: ErrorBody?,
        signer: (any RequestAuthentication)?, traffic: TrafficPolicy?,  // Traffic control (27)
        cache: HTTPCache?  // HTTP cache (issue 26)
    ) {
        self.endpointClosure = endpointClosure ?? Provider.defaultEndpointMapping(for:)
        self.requestClosure = requestClosure ?? Provider.defaultRequestMapping(for:)
        self.mapsByDefault = (endpointClosure == nil, requestClosure == nil)
        self.stubClosure = stubClosure
        self.transport = transport
        self.plugins = plugins
        self.hooked = PluginsByHook(plugins)
        self.clock = clock
        self.timeout = timeout
        self.callTimeout = callTimeout
        self.limits = limits
        self.deadlines = Self.makeTimer(clock)
        self.elapsed = Self.makeElapsed(clock)
        self.deduplication = deduplication
        self.retryPolicy = retryPolicy
        self.errorBody = errorBody
        self.sharedPlan = Self.makeSharedPlan(
            limits: limits, timeout: timeout, callTimeout: callTimeout, retryPolicy: retryPolicy,
            deduplication: deduplication, errorBody: errorBody)
        self.authentication = signer
        self.cache = cache  // HTTP cache (issue 26)
        // Traffic control (27)
        self.trafficControl = traffic.map { [elapsed = self.elapsed] in
            TrafficController(policy: $0, clock: clock, elapsed: elapsed)
        }
    }

    /// Sends the request for `target` and returns its response.
    ///
    /// - Parameter target: What to request.
    /// - Returns: The response, after validation and plugins' `process`.
    /// - Throws: ``CourierError``: ``CourierError/statusCode(_:)`` when validation fails,
    ///   ``CourierError/timedOut(_:)`` after the deadline, ``CourierError/cancelled`` when the
    ///   calling task is cancelled (at any stage; a request already cancelled sends nothing),
    ///   ``CourierError/underlying(_:_:)`` for transport failures, and mapping or encoding errors
    ///   before anything is sent.
    public nonisolated func request(_ target: Target) async throws(CourierError) -> Response {
        try await perform(plan(target, mode: .buffered), target: target).get().head
    }

    /// Sends the request for `target` and returns as soon as the response head has arrived and
    /// been accepted; the body follows as it arrives.
    ///
    /// ```swift
    /// let stream = try await provider.stream(.events(room))
    /// for try await event in stream.events { print(event.event, event.data) }
    /// ```
    ///
    /// The pipeline is the one ``request(_:)`` runs, up to the head: mappings, plugins' `prepare`
    /// and `willSend`, signing, the final-request checks, then the head is validated against the
    /// target's ``TargetType/validation``; retries and credential refresh apply, since no body has
    /// been handed over yet. A refused status throws ``CourierError/statusCode(_:)`` with the start
    /// of the error body (up to ``Limits/maxErrorBodyBytes``). Plugins' `didReceive` and `process`
    /// see the head (its `data` is empty); ``Plugin/didFinish(_:metrics:context:)`` runs when the
    /// body ends: with the head when it was read to the end, ``CourierError/cancelled`` when the
    /// reader left early, or the error that ended it. Streams are never shared with identical
    /// requests (de-duplication does not apply) and a download destination is ignored.
    ///
    /// Deadlines: the target's (or provider's) `timeout` covers each attempt up to the head (for a
    /// refused status, up to the start of its body that the error keeps), and
    /// `callTimeout` the whole call up to the head; `idleTimeout` also bounds each wait for that
    /// start of a refused body, and fails the body with
    /// ``CourierError/timedOut(_:)`` when its reader waits that long for the next chunk, and
    /// `totalTimeout` when the body has not ended that long after the head. All run on the
    /// provider's clock.
    ///
    /// - Parameters:
    ///   - target: What to request.
    ///   - idleTimeout: The longest wait for the next chunk. Default: `nil` (none).
    ///   - totalTimeout: The longest time the body may take after the head. Default: `nil` (none).
    /// - Returns: The head and the body (see ``ResponseStream``).
    /// - Throws: ``CourierError`` for anything that happens before the head is accepted.
    public nonisolated func stream(
        _ target: Target, idleTimeout: Duration? = nil, totalTimeout: Duration? = nil
    ) async throws(CourierError) -> ResponseStream {
        try await stream(target, idleTimeout: idleTimeout, totalTimeout: totalTimeout, headers: [:])
    }

    nonisolated(nonsending) func stream(
        _ target: Target, idleTimeout: Duration? = nil, totalTimeout: Duration? = nil, headers: [String: String]
    ) async throws(CourierError) -> ResponseStream {
        let plan = plan(target, mode: .stream(idleTimeout: idleTimeout), headers: headers)
        // Issue 31: a stream call answers a stream (CallAnswer.processed keeps it one).
        let streamed: StreamedResponse
        switch try await perform(plan, target: target).get() {
        case .streamed(let answer): streamed = answer
        // Not answered by the pipeline (it keeps a stream call's answer streamed); its data would be the body.
        case .whole(let response): streamed = StreamedResponse(head: response, body: ResponseBody(response.data))
        }
        let (head, body) = (streamed.head, streamed.body)
        if let idleTimeout { body.buffer.setIdleTimeout(idleTimeout, timer: deadlines) }
        if let totalTimeout { body.buffer.setTotalTimeout(totalTimeout, timer: deadlines) }
        return ResponseStream(head: head, body: body, limits: plan.limits)
    }

    /// Sends the request for `target` and reports its progress.
    ///
    /// ```swift
    /// for try await event in provider.requestWithProgress(.download(id)) {
    ///     if let fraction = event.fraction { bar.update(fraction) }
    ///     if let response = event.response { print("saved to", response.fileURL!) }
    /// }
    /// ```
    ///
    /// Events come while the body is sent and while the response arrives (see ``ProgressEvent``);
    /// the last one is completed and carries the response. A stubbed request yields just that
    /// completed event. The request starts at once; ending the iteration early (`break`, dropping
    /// the stream) or cancelling the iterating task cancels it and removes its temporary files; a
    /// cancelled iterating task gets ``CourierError/cancelled``. Iterate the stream once, from one
    /// task (a second iterator throws ``CourierError/invalidUse(_:)``).
    /// Requests with progress are never merged with others in flight.
    ///
    /// - Parameter target: What to request.
    /// - Returns: The events; the stream throws the request's ``CourierError``.
    public nonisolated func requestWithProgress(_ target: Target) -> ProgressStream {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: ProgressEvent.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(256))
        let reporter = ProgressReporter(continuation)
        let task = Task {
            switch await perform(plan(target, mode: .progress(reporter)), target: target) {
            case .success(let answer): reporter.finish(with: answer.head)
            case .failure(let error): reporter.fail(error)
            }
        }
        continuation.onTermination = { termination in
            if case .cancelled = termination { task.cancel() }
        }
        return ProgressStream(stream)
    }
}

extension Provider {
    /// Renamed ``init(endpointClosure:requestClosure:stubClosure:transport:plugins:clock:timeout:callTimeout:limits:deduplication:retryPolicy:errorBody:traffic:cache:)``
    /// (Moya's labels).
    @available(
        *, unavailable,
        renamed:
            "init(endpointClosure:requestClosure:stubClosure:transport:plugins:clock:timeout:callTimeout:limits:deduplication:retryPolicy:errorBody:)"
    )
    public init(
        endpointMapping: EndpointClosure? = nil,
        requestMapping: RequestClosure? = nil,
        stubBehavior: @escaping StubClosure = Provider.neverStub(_:),
        transport: any Transport = URLSessionTransport(),
        plugins: [any Plugin] = [],
        clock: any Clock<Duration> = ContinuousClock(),
        timeout: Duration? = nil,
        callTimeout: Duration? = nil,
        limits: Limits = .default,
        deduplication: Deduplication = .disabled,
        retryPolicy: RetryPolicy = .disabled,
        errorBody: ErrorBody? = nil
    ) {
        self.init(
            endpointClosure: endpointMapping, requestClosure: requestMapping, stubClosure: stubBehavior,
            transport: transport, plugins: plugins, clock: clock, timeout: timeout, callTimeout: callTimeout,
            limits: limits, deduplication: deduplication, retryPolicy: retryPolicy, errorBody: errorBody)
    }

    /// Renamed ``init(endpointClosure:requestClosure:stubClosure:transport:plugins:clock:timeout:callTimeout:limits:deduplication:retryPolicy:errorBody:traffic:authentication:cache:)``
    /// (Moya's labels).
    @available(
        *, unavailable,
        renamed:
            "init(endpointClosure:requestClosure:stubClosure:transport:plugins:clock:timeout:callTimeout:limits:deduplication:retryPolicy:errorBody:authentication:)"
    )
    public init<A: Authenticator>(
        endpointMapping: EndpointClosure? = nil,
        requestMapping: RequestClosure? = nil,
        stubBehavior: @escaping StubClosure = Provider.neverStub(_:),
        transport: any Transport = URLSessionTransport(),
        plugins: [any Plugin] = [],
        clock: any Clock<Duration> = ContinuousClock(),
        timeout: Duration? = nil,
        callTimeout: Duration? = nil,
        limits: Limits = .default,
        deduplication: Deduplication = .disabled,
        retryPolicy: RetryPolicy = .disabled,
        errorBody: ErrorBody? = nil,
        authentication: Authentication<A>?
    ) {
        self.init(
            endpointClosure: endpointMapping, requestClosure: requestMapping, stubClosure: stubBehavior,
            transport: transport, plugins: plugins, clock: clock, timeout: timeout, callTimeout: callTimeout,
            limits: limits, deduplication: deduplication, retryPolicy: retryPolicy, errorBody: errorBody,
            authentication: authentication)
    }

    private static func makeTimer<C: Clock<Duration>>(_ clock: C) -> any DeadlineScheduling {
        DeadlineTimer(clock: clock)
    }

    private static func makeElapsed<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        // The default clock without generic indirection: this is read a few times per request.
        if let continuous = clock as? ContinuousClock {
            let origin = continuous.now
            return { origin.duration(to: ContinuousClock.now) }
        }
        let origin = clock.now
        return { origin.duration(to: clock.now) }
    }

    /// The default endpoint mapping: ``Endpoint/init(target:)``.
    /// - Parameter target: The target.
    /// - Returns: Its endpoint.
    public static func defaultEndpointMapping(for target: Target) async throws -> Endpoint {
        try Endpoint(target: target)
    }

    /// The default request mapping: ``Endpoint/urlRequest()``. A small multipart form with file
    /// parts, whose body ``Endpoint/urlRequest()`` reads from disk, is built off Swift's
    /// cooperative thread pool.
    /// - Parameter endpoint: The endpoint.
    /// - Returns: Its request.
    public static func defaultRequestMapping(for endpoint: Endpoint) async throws -> URLRequest {
        if readsFiles(endpoint) {
            return try await BlockingIO.run { _ in try endpoint.urlRequest() }
        }
        return try endpoint.urlRequest()
    }

    /// Whether ``Endpoint/urlRequest()`` reads files for `endpoint` (a small multipart form with
    /// file parts), so the default request mapping runs it off Swift's cooperative thread pool.
    static func readsFiles(_ endpoint: Endpoint) -> Bool {
        if case .uploadMultipart(let form, _) = endpoint.task { return !MultipartEncoder.isInMemory(form) }
        return false
    }

    /// Never stub: every request goes to the transport.
    public static func neverStub(_ target: Target) -> StubBehavior { .never }

    /// Stub every request at once with its sample response.
    public static func immediatelyStub(_ target: Target) -> StubBehavior { .immediate }

    /// Stub every request with its sample response after `delay` on the provider's clock.
    /// - Parameter delay: How long each stubbed request waits.
    /// - Returns: A stub closure for the provider's `stubClosure`.
    public static func delayedStub(_ delay: Duration) -> StubClosure {
        { _ in .delayed(delay) }
    }
}
