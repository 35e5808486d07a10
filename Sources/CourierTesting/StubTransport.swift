import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport for tests: answers requests from routes you declare, records every request, and
/// fails loudly on a request nothing was declared for.
///
/// ```swift
/// let transport = StubTransport()
/// transport.on(.get, "users/*", .json(User(login: "ada")))
/// let created = transport.route(.post, "users", .status(201))
/// let provider = Provider<GitHub>(transport: transport)
///
/// let user = try await provider.request(.user("ada")).map(User.self)
/// transport.verify(created, times: 0)
/// ```
///
/// Each test makes its own transport and provider, so parallel tests never see each other's routes.
/// When several routes match, the one declared last wins (so a test can override a shared default);
/// a route whose answer is used up (``StubAnswer/times(_:)``) stands aside for the ones before it.
/// Paths are compared with the request URL's path without its leading `/`; `*` matches one
/// segment and `**` any number of them, anywhere in the path. ``RequestMatcher`` adds conditions on the host, query,
/// headers and body.
///
/// Answers reach the caller as the wire would carry them: an answer to a HEAD, or with a 1xx, 204
/// or 304 status, has no body, whatever the route's answer holds (its headers stay).
///
/// A request no route answers fails with ``UnstubbedRequest``, whose description lists the
/// routes that came closest and what each missed; by default it is also recorded as a Swift
/// Testing issue where the transport was made, so a caller that swallows the error still fails
/// the test.
public final class StubTransport: Transport, Sendable {
    /// A request the transport received.
    public struct RecordedRequest: Sendable {
        /// The request as sent (after plugins' `prepare`).
        public let request: URLRequest
        /// The body: `httpBody`, or the contents of an uploaded file.
        public let body: Data?
        /// The target it was made for, when the provider said (the one a `MultiTarget` wraps).
        public let target: (any TargetType)?
        /// The route that answered it; `nil` when none did.
        public let route: StubRoute?
    }

    /// What happens to a request that no route answers.
    public enum UnmatchedRequests: Sendable {
        /// Fails the request with ``UnstubbedRequest`` and records a Swift Testing issue where
        /// the transport was made (the default).
        case recordIssue
        /// Only fails the request with ``UnstubbedRequest``: for tests that expect it.
        case throwError
    }

    private struct State {
        var routes: [StubRoute] = []
        var recorded: [RecordedRequest] = []
    }

    private let state = Locked(State())
    private let clock: any Clock<Duration>
    private let unmatched: UnmatchedRequests
    private let sourceLocation: SourceLocation

    /// Creates a transport with no routes.
    /// - Parameters:
    ///   - clock: The clock answer delays, throttled bodies and stalls wait on. Default:
    ///     `ContinuousClock()`; pass a ``TestClock`` (or ``ImmediateClock``) to control them.
    ///   - unmatched: What happens to a request no route answers. Default: ``UnmatchedRequests/recordIssue``.
    ///   - sourceLocation: Where issues about unmatched requests are reported. Default: the caller.
    public init(
        clock: any Clock<Duration> = ContinuousClock(), unmatched: UnmatchedRequests = .recordIssue,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        self.clock = clock
        self.unmatched = unmatched
        self.sourceLocation = sourceLocation
    }

    /// Every request received so far, in order. Safe to read while requests run.
    public var requests: [RecordedRequest] { state.withLock { $0.recorded } }

    /// Every route, in the order declared.
    public var routes: [StubRoute] { state.withLock { $0.routes } }

    /// The routes that have answered no request yet.
    public var unusedRoutes: [StubRoute] { routes.filter { $0.hitCount == 0 } }

    // MARK: Declaring routes

    /// Answers requests with this method and path.
    /// - Parameters:
    ///   - method: The method, or `nil` for any.
    ///   - path: The URL path without its leading `/`; `*` matches one segment, `**` any
    ///     number of them (none included).
    ///   - answer: What to answer.
    ///   - sourceLocation: Where the route is declared. Default: the caller.
    /// - Returns: The transport, so routes can be chained.
    @discardableResult
    public func on(
        _ method: HTTPMethod?, _ path: String, _ answer: StubAnswer, sourceLocation: SourceLocation = #_sourceLocation
    ) -> StubTransport {
        route(Self.matcher(method, path), answer, sourceLocation: sourceLocation)
        return self
    }

    /// Answers requests that `matcher` matches.
    /// - Parameters:
    ///   - matcher: The conditions, joined with `&&`.
    ///   - answer: What to answer.
    ///   - sourceLocation: Where the route is declared. Default: the caller.
    /// - Returns: The transport, so routes can be chained.
    @discardableResult
    public func on(
        _ matcher: RequestMatcher, _ answer: StubAnswer, sourceLocation: SourceLocation = #_sourceLocation
    ) -> StubTransport {
        route(matcher, answer, sourceLocation: sourceLocation)
        return self
    }

    /// Answers requests for which `matches` returns `true`.
    /// - Parameters:
    ///   - matches: Decides whether the route applies.
    ///   - answer: What to answer.
    ///   - sourceLocation: Where the route is declared. Default: the caller.
    /// - Returns: The transport, so routes can be chained.
    @discardableResult
    public func on(
        _ matches: @escaping @Sendable (URLRequest) -> Bool, _ answer: StubAnswer,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> StubTransport {
        route(.predicate("predicate", matches), answer, sourceLocation: sourceLocation)
        return self
    }

    /// Declares a route with this method and path and returns it, to verify later.
    /// - Parameters:
    ///   - method: The method, or `nil` for any.
    ///   - path: The URL path without its leading `/`; `*` matches one segment, `**` any
    ///     number of them (none included).
    ///   - answer: What to answer.
    ///   - sourceLocation: Where the route is declared. Default: the caller.
    /// - Returns: The route.
    @discardableResult
    public func route(
        _ method: HTTPMethod?, _ path: String, _ answer: StubAnswer, sourceLocation: SourceLocation = #_sourceLocation
    ) -> StubRoute {
        route(Self.matcher(method, path), answer, sourceLocation: sourceLocation)
    }

    /// Declares a route for the requests `matcher` matches and returns it, to verify later.
    /// - Parameters:
    ///   - matcher: The conditions, joined with `&&`.
    ///   - answer: What to answer.
    ///   - sourceLocation: Where the route is declared. Default: the caller.
    /// - Returns: The route.
    @discardableResult
    public func route(
        _ matcher: RequestMatcher, _ answer: StubAnswer, sourceLocation: SourceLocation = #_sourceLocation
    ) -> StubRoute {
        let route = StubRoute(matcher: matcher, answer: answer, sourceLocation: sourceLocation)
        state.withLock { $0.routes.append(route) }
        return route
    }

    /// Removes every route and recorded request.
    public func reset() {
        state.withLock { $0 = State() }
    }

    static func matcher(_ method: HTTPMethod?, _ path: String) -> RequestMatcher {
        method.map { .method($0) && .path(path) } ?? .path(path)
    }

    // MARK: Answering

    public func send(_ transfer: Transfer) async throws -> Response {
        let request = try await transfer.bufferedRequest()
        let answer = try await answer(for: request, target: transfer.target)
        let (head, delivery) = Self.onTheWire(answer, try await answer.respond(to: request), answering: request)
        let sent = Int64(request.httpBody?.count ?? 0)
        // The same path as Courier's own stubs and non-streaming transports: downloads written,
        // progress and limits, in one place.
        if delivery.isImmediate { return try await transfer.completeBuffered(head, sent: sent) }

        if sent > 0 { transfer.progress?(.sent(bytes: sent, total: sent)) }
        transfer.progress?(.responseStarted(expectedLength: Int64(delivery.total)))
        var body = Data()
        for chunk in delivery.chunks {
            if delivery.interval > .zero { try await clock.sleep(for: delivery.interval.sleepable) }
            body.append(chunk)
            transfer.progress?(.received(bytes: Int64(body.count)))
        }
        switch delivery.ending {
        case .complete:
            let response = Response(
                statusCode: head.statusCode, data: body, request: head.request, response: head.response)
            return try await transfer.completeBuffered(response, sent: sent, reportingProgress: false)
        case .dropped:
            throw URLError.connectionDropped(url: request.url, remaining: delivery.total - body.count)
        case .stalled:
            try await stall()
            throw URLError(.timedOut)
        }
    }

    /// The head at once (after the answer's delay), then the body as the answer delivers it, on
    /// the transport's clock: chunks of a streamed or throttled answer one by one, then the end
    /// (complete, dropped or stalled).
    public func stream(_ transfer: Transfer) async throws -> StreamedResponse {
        let request = try await transfer.bufferedRequest()
        let answer = try await answer(for: request, target: transfer.target)
        let (whole, delivery) = Self.onTheWire(answer, try await answer.respond(to: request), answering: request)
        let head = Response(statusCode: whole.statusCode, data: Data(), request: request, response: whole.response)
        let ending: ChunkedAnswer.Ending =
            switch delivery.ending {
            case .complete: .finish
            case .dropped:
                .fail(URLError.connectionDropped(url: request.url, remaining: delivery.total - delivery.deliveredBytes))
            case .stalled: .stall(Self.stallDuration)
            }
        return ChunkedAnswer.stream(
            head: head, chunks: delivery.chunks, interval: delivery.interval, clock: clock, limits: transfer.limits,
            ending: ending)
    }

    /// The answer's head and its body's delivery as a real transport would hand them over: an
    /// answer to a HEAD, a 1xx, a 204 or a 304 has no body on the wire
    /// (`ResponseBodyLimit.hasNoBody(status:method:)`), whatever the route's answer holds (data,
    /// chunks, events), and is whole once its head is in, so a dropped or stalled body does not
    /// apply. A test does not pass on a body production never sees. Its headers stay.
    static func onTheWire(
        _ answer: StubAnswer, _ response: Response, answering request: URLRequest
    ) -> (Response, StubAnswer.Delivery) {
        guard ResponseBodyLimit.hasNoBody(status: response.statusCode, method: request.httpMethod) else {
            return (response, answer.delivery(of: response.data))
        }
        return (response.data.isEmpty ? response : response.withBody(Data()), .nothing)
    }

    /// Records the request, picks its route and waits the answer's delay (or stalls).
    private func answer(for request: URLRequest, target: (any TargetType)?) async throws -> StubAnswer {
        let candidates = state.withLock { $0.routes }
        var chosen: (route: StubRoute, hit: Int)?
        for route in candidates.reversed() where route.matcher.matches(request) {
            if let hit = route.claim() {
                chosen = (route, hit)
                break
            }
        }
        state.withLock {
            $0.recorded.append(
                RecordedRequest(request: request, body: request.httpBody, target: target, route: chosen?.route))
        }
        guard let chosen else {
            let failure = UnstubbedRequest(
                request: request, target: target, closest: Self.closest(candidates, to: request))
            if unmatched == .recordIssue {
                Issue.record(Comment(rawValue: failure.description), sourceLocation: sourceLocation)
            }
            throw failure
        }
        let answer = chosen.route.answer.resolved(hit: chosen.hit)
        // Cut to what a clock can wait (`ContinuousClock` traps past `Int64.max` seconds).
        if let delay = answer.delay { try await clock.sleep(for: delay.sleepable) }
        if case .stall = answer.source {
            try await stall()
            throw URLError(.timedOut)
        }
        return answer
    }

    /// A stall: 100 years on the clock, which cancellation or a deadline ends first.
    private static let stallDuration = Duration.seconds(100 * 365 * 86_400)

    private func stall() async throws {
        try await clock.sleep(for: Self.stallDuration)
    }

    /// The routes that came closest to matching `request`, best first, with what each missed.
    static func closest(_ routes: [StubRoute], to request: URLRequest, count: Int = 3) -> [String] {
        let scored = routes.reversed().map { route -> (missed: [String], route: StubRoute) in
            (route.matcher.missed(by: request), route)
        }
        return scored.sorted { $0.missed.count < $1.missed.count }.prefix(count).map { entry in
            let place = "\(entry.route.sourceLocation.fileName):\(entry.route.sourceLocation.line)"
            let why =
                entry.missed.isEmpty
                ? "matches, but answered its \(entry.route.hitCount) time(s) already"
                : "missed " + entry.missed.joined(separator: ", ")
            return "\(entry.route) (\(place)): \(why)"
        }
    }
}

/// A request a ``StubTransport`` has no route for. It reaches the caller as
/// `CourierError.underlying(_:_:)`; its description names the target, method and URL, and lists
/// the routes that came closest with the conditions each missed.
public struct UnstubbedRequest: Error, CustomStringConvertible, Sendable {
    /// The request.
    public let request: URLRequest
    /// The target, when known.
    public let target: (any TargetType)?
    /// The routes that came closest, best first, each with the conditions it missed.
    public let closestRoutes: [String]

    init(request: URLRequest, target: (any TargetType)?, closest: [String]) {
        self.request = request
        self.target = target
        self.closestRoutes = closest
    }

    public var description: String {
        let method = request.httpMethod ?? "GET"
        let url = request.url.map { Redaction.string($0.absoluteString) } ?? "<no URL>"
        // The type and case only: associated values and stored properties may hold secrets.
        let name = target.map { RequestContext.name(of: $0) } ?? "unknown target"
        var text = "No stub for \(method) \(url) (target: \(name))."
        if closestRoutes.isEmpty {
            text += " The transport has no routes: add one with StubTransport.on(_:_:_:)."
        } else {
            text += " Closest routes:\n" + closestRoutes.map { "  - \($0)" }.joined(separator: "\n")
        }
        return text
    }
}
