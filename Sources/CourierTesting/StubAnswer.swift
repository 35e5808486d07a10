import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a ``StubTransport`` route answers with: a response (body, status, headers), an error, a
/// script of answers that changes with each hit, and the network conditions it arrives under.
///
/// ```swift
/// transport.on(.get, "me", .sequence([.status(503), .json(user)]))          // 503, then 200s
/// transport.on(.get, "feed", .json(feed).throttled(bytesPerSecond: 1_024))  // drives progress
/// transport.on(.get, "big", .file(fixture).droppingConnection(afterBytes: 4_096))
/// ```
///
/// Waits (``delayed(by:)``, ``throttled(bytesPerSecond:chunkSize:)``, ``stall``) run on the
/// transport's clock, so a ``TestClock`` controls them.
public struct StubAnswer: Sendable {
    enum Source: Sendable {
        /// Builds the response (its `data` is the whole body) from the request.
        case make(@Sendable (URLRequest) async throws -> Response)
        /// Picks the answer for the route's n-th hit (from 1).
        case scripted(@Sendable (Int) -> StubAnswer)
        /// No response ever comes.
        case stall
    }

    /// How the body ends.
    enum Ending: Sendable {
        case complete
        case dropped(afterBytes: Int)
        case stalled(afterBytes: Int)
    }

    let source: Source
    /// How long the answer waits on the transport's clock first.
    public private(set) var delay: Duration?
    /// For a streamed answer: its chunks and the wait before each.
    var chunks: (data: [Data], interval: Duration)?
    /// For a throttled answer: the size of each chunk and the wait before each.
    var pace: (chunkSize: Int, interval: Duration)?
    var ending = Ending.complete
    /// How many times the route answers before it stands aside; `nil` for no limit.
    var limit: Int?

    private init(_ source: Source) {
        self.source = source
    }

    init(_ make: @escaping @Sendable (URLRequest) async throws -> Response) {
        self.init(.make(make))
    }

    // MARK: Responses

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
                .respond(to: request)
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

    /// The body of a file (a fixture), read when the route answers, with `Content-Type` from the
    /// file's extension (`user.json` → `application/json`, unknown → `application/octet-stream`)
    /// unless `headers` name one.
    /// - Parameters:
    ///   - url: A regular file.
    ///   - status: Default: 200.
    ///   - headers: Default: none besides the `Content-Type`.
    /// - Returns: The answer; a file that cannot be read fails the request with
    ///   ``StubFixtureError/unreadable(_:reason:)``.
    public static func file(_ url: URL, status: Int = 200, headers: [String: String] = [:]) -> StubAnswer {
        var headers = headers
        if !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            headers["Content-Type"] = MIMEType.forFileName(url.lastPathComponent)
        }
        let fields = headers
        return StubAnswer { request in
            let body: Data
            do {
                body = try await BlockingIO.run { isCancelled in try FileBody.readAll(url, isCancelled: isCancelled) }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw StubFixtureError.unreadable(url, reason: "\(error)")
            }
            return try await data(body, status: status, headers: fields).respond(to: request)
        }
    }

    /// The body of a resource in a bundle (a test target's `Bundle.module`), as ``file(_:status:headers:)``.
    /// - Parameters:
    ///   - name: The resource's file name, with its extension (`"user.json"`).
    ///   - bundle: The bundle, such as `Bundle.module`.
    ///   - status: Default: 200.
    ///   - headers: Default: none besides the `Content-Type`.
    /// - Returns: The answer; a missing resource fails the request with
    ///   ``StubFixtureError/resourceNotFound(_:bundle:)``.
    public static func resource(
        _ name: String, in bundle: Bundle, status: Int = 200, headers: [String: String] = [:]
    ) -> StubAnswer {
        guard let url = bundle.url(forResource: name, withExtension: nil) else {
            return error(StubFixtureError.resourceNotFound(name, bundle: bundle.bundleURL))
        }
        return file(url, status: status, headers: headers)
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
    /// - Returns: The answer; an ``error(_:)`` with the `CourierError.invalidUse` of
    ///   `ServerSentEvent.encoded()` when an event cannot be written as a stream.
    public static func events(_ events: [ServerSentEvent], interval: Duration = .zero) -> StubAnswer {
        do throws(CourierError) {
            var chunks: [Data] = []
            for event in events { chunks.append(try event.encoded()) }
            return stream(chunks, headers: ["Content-Type": "text/event-stream"], interval: interval)
        } catch {
            return .error(error)
        }
    }

    /// Whatever the closure makes of the request.
    public static func handler(_ make: @escaping @Sendable (URLRequest) async throws -> Response) -> StubAnswer {
        StubAnswer(make)
    }

    /// No response ever comes: the request waits until its task is cancelled or a deadline passes
    /// (it sleeps on the transport's clock for 100 years, so a ``TestClock`` counts it among its
    /// sleepers).
    public static var stall: StubAnswer { StubAnswer(.stall) }

    // MARK: Scripts

    /// The answers in turn, one per hit of the route: the first hit gets the first answer, and
    /// every hit past the end gets the last one again (add ``times(_:)`` to stop there instead).
    ///
    /// ```swift
    /// transport.on(.get, "me", .sequence([.status(503), .status(503), .json(user)]))
    /// ```
    /// - Parameter answers: The answers; an empty list fails every request with
    ///   ``StubFixtureError/emptySequence``.
    public static func sequence(_ answers: [StubAnswer]) -> StubAnswer {
        guard let last = answers.last else { return error(StubFixtureError.emptySequence) }
        return scripted { hit in hit <= answers.count ? answers[hit - 1] : last }
    }

    /// The answer for each hit of the route, counted from 1: for flows that depend on how many
    /// times a route was asked (a token that expires on the third call, say).
    /// - Parameter answer: Returns the answer for the n-th hit.
    public static func scripted(_ answer: @escaping @Sendable (_ hit: Int) -> StubAnswer) -> StubAnswer {
        StubAnswer(.scripted(answer))
    }

    /// The route answers only the first time; then it stands aside, and an earlier route (or
    /// none) answers. Same as `times(1)`.
    public func once() -> StubAnswer { times(1) }

    /// The route answers `count` times; then it stands aside, and an earlier route (or none)
    /// answers.
    ///
    /// ```swift
    /// transport.on(.get, "me", .json(user))                 // from the third call on
    /// transport.on(.get, "me", .status(503).times(2))       // the first two calls
    /// ```
    /// - Parameter count: How many times; 0 or less never answers.
    public func times(_ count: Int) -> StubAnswer {
        var copy = self
        copy.limit = max(0, count)
        return copy
    }

    // MARK: Conditions

    /// The same answer, after waiting `delay` on the transport's clock.
    /// - Parameter delay: The wait.
    public func delayed(by delay: Duration) -> StubAnswer {
        var copy = self
        copy.delay = delay
        return copy
    }

    /// The body arrives in chunks of `chunkSize` bytes at `bytesPerSecond`, each chunk waiting its
    /// share of a second on the transport's clock: progress reports come as each chunk arrives,
    /// and a stream reads them one by one.
    ///
    /// An answer with no body on the wire (to a `HEAD`, or with a 1xx, 204 or 304 status) is
    /// whole once its head is in: this does not apply to it.
    /// - Parameters:
    ///   - bytesPerSecond: The rate; at least 1.
    ///   - chunkSize: Bytes per chunk; at least 1. Default: 16,384.
    public func throttled(bytesPerSecond: Int, chunkSize: Int = 16_384) -> StubAnswer {
        let rate = max(1, bytesPerSecond)
        let size = max(1, chunkSize)
        var copy = self
        copy.pace = (size, .seconds(Double(size) / Double(rate)))
        return copy
    }

    /// The connection drops after `count` bytes of the body: the request (or the stream, after
    /// handing those bytes over) fails with the error `URLSessionTransport` gives for a body cut
    /// short: `URLError(.networkConnectionLost)` (on Linux with libcurl's description, "transfer
    /// closed with N bytes remaining to read").
    ///
    /// An answer with no body on the wire (to a `HEAD`, or with a 1xx, 204 or 304 status) is
    /// whole once its head is in: this does not apply to it.
    /// - Parameter count: Bytes delivered before the drop.
    public func droppingConnection(afterBytes count: Int) -> StubAnswer {
        var copy = self
        copy.ending = .dropped(afterBytes: max(0, count))
        return copy
    }

    /// The head arrives, then `count` bytes of the body, then nothing more until the task is
    /// cancelled or a deadline passes (as ``stall``, on the transport's clock).
    ///
    /// An answer with no body on the wire (to a `HEAD`, or with a 1xx, 204 or 304 status) is
    /// whole once its head is in: this does not apply to it.
    /// - Parameter count: Bytes delivered before the stall. Default: 0.
    public func stalling(afterBytes count: Int = 0) -> StubAnswer {
        var copy = self
        copy.ending = .stalled(afterBytes: max(0, count))
        return copy
    }

    // MARK: Answering

    /// The answer for the route's `hit`-th use, scripts resolved; this answer's delay and
    /// conditions apply on top of the chosen one's.
    func resolved(hit: Int) -> StubAnswer {
        guard case .scripted(let pick) = source else { return self }
        var chosen = pick(hit).resolved(hit: hit)
        if let delay { chosen.delay = (chosen.delay ?? .zero) + delay }
        if let pace { chosen.pace = pace }
        if case .complete = chosen.ending { chosen.ending = ending }
        return chosen
    }

    /// The response with its whole body.
    func respond(to request: URLRequest) async throws -> Response {
        switch source {
        case .make(let make): return try await make(request)
        case .scripted(let pick): return try await pick(1).respond(to: request)
        case .stall: throw URLError(.timedOut)
        }
    }

    /// The body as it goes out: the chunks, the wait before each, and how it ends.
    func delivery(of body: Data) -> Delivery {
        var pieces: [Data]
        var interval = Duration.zero
        if let chunks {
            pieces = chunks.data
            interval = chunks.interval
        } else if let pace {
            pieces = stride(from: 0, to: body.count, by: pace.chunkSize).map {
                body.subdata(in: $0..<min($0 + pace.chunkSize, body.count))
            }
            interval = pace.interval
        } else {
            pieces = body.isEmpty ? [] : [body]
        }
        switch ending {
        case .complete:
            return Delivery(chunks: pieces, interval: interval, ending: .complete, total: body.count)
        case .dropped(let count), .stalled(let count):
            var kept: [Data] = []
            var remaining = count
            for piece in pieces where remaining > 0 {
                kept.append(piece.prefix(remaining))
                remaining -= min(remaining, piece.count)
            }
            return Delivery(chunks: kept, interval: interval, ending: ending, total: body.count)
        }
    }

    /// A body as it goes out.
    struct Delivery: Sendable {
        let chunks: [Data]
        let interval: Duration
        let ending: Ending
        /// The whole body's size (what was announced), cut short or not.
        let total: Int

        /// No body: whole once the head is in.
        static let nothing = Delivery(chunks: [], interval: .zero, ending: .complete, total: 0)

        /// Whether it is the whole body at once: the plain buffered path serves it.
        var isImmediate: Bool {
            if case .complete = ending, interval == .zero, chunks.count <= 1 { return true }
            return false
        }

        var deliveredBytes: Int { chunks.reduce(0) { $0 + $1.count } }
    }
}

/// A fixture a ``StubTransport`` answer could not use.
public enum StubFixtureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be read (missing, not a regular file, unreadable).
    case unreadable(URL, reason: String)
    /// The bundle has no resource of that name.
    case resourceNotFound(String, bundle: URL)
    /// ``StubAnswer/sequence(_:)`` was given no answers.
    case emptySequence

    public var description: String {
        switch self {
        case .unreadable(let url, let reason): "Stub fixture \(url.path) cannot be read: \(reason)"
        case .resourceNotFound(let name, let bundle):
            "Stub fixture \(name) is not a resource of the bundle at \(bundle.path); declare it in the test target's resources"
        case .emptySequence: "StubAnswer.sequence was given no answers"
        }
    }
}

extension URLError {
    /// What `URLSessionTransport` throws for a body cut short by the server, on this platform.
    static func connectionDropped(url: URL?, remaining: Int) -> URLError {
        var info: [String: Any] = [:]
        if let url {
            info[NSURLErrorFailingURLErrorKey] = url
        }
        #if canImport(FoundationNetworking)
            // libcurl's CURLE_PARTIAL_FILE, as FoundationNetworking describes it (the transport
            // reports it as a lost connection).
            info[NSLocalizedDescriptionKey] = "transfer closed with \(remaining) bytes remaining to read"
        #endif
        return URLError(.networkConnectionLost, userInfo: info)
    }
}
