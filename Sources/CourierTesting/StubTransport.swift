import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport for tests: answers requests from routes you declare, records every request, and
/// fails loudly on a request nothing was declared for.
///
/// ```swift
/// let transport = StubTransport()
/// transport.on(.get, "users/*", .json(User(login: "ada")))
/// transport.on(.post, "users", .status(201))
/// let provider = Provider<GitHub>(transport: transport)
///
/// let user = try await provider.request(.user("ada")).map(User.self)
/// #expect(transport.requests.map(\.request.httpMethod) == ["GET"])
/// ```
///
/// Each test makes its own transport and provider, so parallel tests never see each other's routes.
/// When several routes match, the one declared last wins (so a test can override a shared default).
/// Paths are compared with the request URL's path without its leading `/`; `*` matches one segment
/// and `**` the rest of the path.
public final class StubTransport: Transport, Sendable {
    /// A request the transport received.
    public struct RecordedRequest: Sendable {
        /// The request as sent (after plugins' `prepare`).
        public let request: URLRequest
        /// The body: `httpBody`, or the contents of an uploaded file.
        public let body: Data?
        /// The target it was made for, when the provider said (the one a `MultiTarget` wraps).
        public let target: (any TargetType)?
    }

    private struct Route {
        let matches: @Sendable (URLRequest) -> Bool
        let answer: StubAnswer
    }

    private let routes = Locked<[Route]>([])
    private let recorded = Locked<[RecordedRequest]>([])
    private let clock: any Clock<Duration>

    /// Creates a transport with no routes.
    /// - Parameter clock: The clock answer delays wait on. Default: `ContinuousClock()`; pass a
    ///   ``TestClock`` to control them.
    public init(clock: any Clock<Duration> = ContinuousClock()) {
        self.clock = clock
    }

    /// Every request received so far, in order. Safe to read while requests run.
    public var requests: [RecordedRequest] { recorded.withLock { $0 } }

    /// Answers requests with this method and path.
    /// - Parameters:
    ///   - method: The method, or `nil` for any.
    ///   - path: The URL path without its leading `/`; `*` matches one segment, `**` the rest.
    ///   - answer: What to answer.
    /// - Returns: The transport, so routes can be chained.
    @discardableResult
    public func on(_ method: HTTPMethod?, _ path: String, _ answer: StubAnswer) -> StubTransport {
        let pattern = Self.segments(path)
        return on(
            { request in
                (method == nil || request.httpMethod == method?.rawValue)
                    && Self.matches(pattern, Self.segments(request.url?.path ?? ""))
            }, answer)
    }

    /// Answers requests for which `matches` returns `true`.
    /// - Parameters:
    ///   - matches: Decides whether the route applies.
    ///   - answer: What to answer.
    /// - Returns: The transport, so routes can be chained.
    @discardableResult
    public func on(_ matches: @escaping @Sendable (URLRequest) -> Bool, _ answer: StubAnswer) -> StubTransport {
        routes.withLock { $0.append(Route(matches: matches, answer: answer)) }
        return self
    }

    /// Removes every route and recorded request.
    public func reset() {
        routes.withLock { $0.removeAll() }
        recorded.withLock { $0.removeAll() }
    }

    public func send(_ request: URLRequest) async throws -> Response {
        try await send(Transfer(request: request))
    }

    public func send(_ transfer: Transfer) async throws -> Response {
        // The same path as Courier's own stubs and non-streaming transports: file bodies read,
        // downloads written, progress and limits, in one place.
        try await transfer.sendBuffered { request in
            recorded.withLock {
                $0.append(RecordedRequest(request: request, body: request.httpBody, target: transfer.target))
            }
            guard let route = routes.withLock({ $0.last { $0.matches(request) } }) else {
                throw UnstubbedRequest(request: request, target: transfer.target)
            }
            if let delay = route.answer.delay {
                try await clock.sleep(for: delay)
            }
            return try await route.answer.make(request)
        }
    }

    /// A route answered with ``StubAnswer/stream(_:status:headers:interval:)`` or
    /// ``StubAnswer/events(_:interval:)`` streams its chunks on the transport's clock; any other
    /// answer is handed over whole.
    public func stream(_ transfer: Transfer) async throws -> StreamedResponse {
        let request = transfer.request
        guard let route = routes.withLock({ $0.last { $0.matches(request) } }), let chunks = route.answer.chunks else {
            return try await streamBuffered(transfer)
        }
        recorded.withLock {
            $0.append(RecordedRequest(request: request, body: request.httpBody, target: transfer.target))
        }
        if let delay = route.answer.delay {
            try await clock.sleep(for: delay)
        }
        let head = try await route.answer.make(request)
        return ChunkedAnswer.stream(
            head: Response(statusCode: head.statusCode, data: Data(), request: request, response: head.response),
            chunks: chunks.data, interval: chunks.interval, clock: clock, limits: transfer.limits)
    }

    static func segments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    static func matches(_ pattern: [Substring], _ path: [Substring]) -> Bool {
        var index = 0
        for (position, segment) in pattern.enumerated() {
            if segment == "**" { return true }
            guard index < path.count, segment == "*" || segment == path[index] else { return false }
            index += 1
            if position == pattern.count - 1 { return index == path.count }
        }
        return pattern.isEmpty && path.isEmpty
    }
}

/// What a ``StubTransport`` route answers with.
public struct StubAnswer: Sendable {
    let make: @Sendable (URLRequest) async throws -> Response
    /// How long the answer waits on the transport's clock first.
    public private(set) var delay: Duration?
    /// For a streamed answer: its chunks and the wait before each.
    var chunks: (data: [Data], interval: Duration)?

    private init(_ make: @escaping @Sendable (URLRequest) async throws -> Response) {
        self.make = make
    }

    /// A body with a status and headers.
    /// - Parameters:
    ///   - data: The body.
    ///   - status: Default: 200.
    ///   - headers: Default: none.
    public static func data(_ data: Data, status: Int = 200, headers: [String: String] = [:]) -> StubAnswer {
        StubAnswer { request in
            let http = request.url.flatMap {
                HTTPURLResponse(url: $0, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
            }
            return Response(statusCode: status, data: data, request: request, response: http)
        }
    }

    /// A JSON body from an `Encodable`, with `Content-Type: application/json`.
    /// - Parameters:
    ///   - value: The value to encode.
    ///   - status: Default: 200.
    ///   - encoder: Default: keys sorted.
    public static func json(
        _ value: some Encodable & Sendable, status: Int = 200, encoder: JSONEncoder = .sortedKeys()
    ) -> StubAnswer {
        StubAnswer { request in
            try await data(encoder.encode(value), status: status, headers: ["Content-Type": "application/json"])
                .make(request)
        }
    }

    /// An empty body with this status.
    /// - Parameter code: The status code.
    public static func status(_ code: Int) -> StubAnswer { data(Data(), status: code) }

    /// This exact response and body.
    public static func response(_ response: HTTPURLResponse, data: Data = Data()) -> StubAnswer {
        StubAnswer { request in
            Response(statusCode: response.statusCode, data: data, request: request, response: response)
        }
    }

    /// The transport fails with this error (e.g. `URLError(.notConnectedToInternet)`).
    public static func error(_ error: any Error) -> StubAnswer {
        StubAnswer { _ in throw error }
    }

    /// A body in chunks, `interval` apart on the transport's clock (the first one too), for
    /// `Provider.stream`; a plain request gets them joined, without waiting.
    /// - Parameters:
    ///   - chunks: The chunks.
    ///   - status: Default: 200.
    ///   - headers: Default: none.
    ///   - interval: The wait before each chunk. Default: none.
    public static func stream(
        _ chunks: [Data], status: Int = 200, headers: [String: String] = [:], interval: Duration = .zero
    ) -> StubAnswer {
        var answer = data(chunks.reduce(into: Data()) { $0.append($1) }, status: status, headers: headers)
        answer.chunks = (chunks, interval)
        return answer
    }

    /// Server-Sent Events, one chunk each, `interval` apart, with `Content-Type: text/event-stream`.
    /// - Parameters:
    ///   - events: The events.
    ///   - interval: The wait before each event. Default: none.
    public static func events(_ events: [ServerSentEvent], interval: Duration = .zero) -> StubAnswer {
        stream(events.map { $0.encoded() }, headers: ["Content-Type": "text/event-stream"], interval: interval)
    }

    /// Whatever the closure makes of the request.
    public static func handler(_ make: @escaping @Sendable (URLRequest) async throws -> Response) -> StubAnswer {
        StubAnswer(make)
    }

    /// The same answer, after waiting `delay` on the transport's clock.
    /// - Parameter delay: The wait.
    public func delayed(by delay: Duration) -> StubAnswer {
        var copy = self
        copy.delay = delay
        return copy
    }
}

/// A request a ``StubTransport`` has no route for. It reaches the caller as
/// `CourierError.underlying(_:_:)`; its description names the target, method and URL.
public struct UnstubbedRequest: Error, CustomStringConvertible, Sendable {
    /// The request.
    public let request: URLRequest
    /// The target, when known.
    public let target: (any TargetType)?

    public var description: String {
        let method = request.httpMethod ?? "GET"
        let url = request.url?.absoluteString ?? "<no URL>"
        let name = target.map { "\($0)" } ?? "unknown target"
        return "No stub for \(method) \(url) (target: \(name)). Add a route with StubTransport.on(_:_:_:)."
    }
}
