import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that records real exchanges to a fixture file and answers from it afterwards,
/// so tests run against real responses without the network.
///
/// ```swift
/// @Test func showsTheUser() async throws {
///     let transport = ReplayTransport("showsTheUser")   // Fixtures/showsTheUser.har beside this file
///     let provider = Provider<GitHub>(transport: transport)
///     let user = try await provider.request(.user("ada")).map(User.self)
///     #expect(user.login == "ada")
/// }
/// ```
///
/// In ``Mode/replay`` (the default) it answers from the fixture and never touches the network; a
/// missing fixture or a request nothing recorded matches fails with a ``ReplayError`` that says
/// how to record it, and is recorded as a Swift Testing issue where the transport was made. Run
/// the tests once with `COURIER_REPLAY=missing` to record what is missing, or
/// `COURIER_REPLAY=record` to record the fixture again; commit the fixture.
///
/// Fixtures are HAR 1.2 files, readable and diffable: sorted keys, sorted headers, fixed times,
/// bodies as text (Base64 when they are not UTF-8), no `Date` header; recorded twice from the same
/// answers they are the same file. Secrets are replaced before anything is written, and only
/// they change (``FixtureRedaction``, with the `RedactionPolicy` the network logger uses:
/// credential headers, secret query items and URL user info, `Location` URLs, secret members and
/// fields of JSON, form, multipart and streamed bodies, by default). Bodies come back byte for byte, downloads and streamed responses
/// included (a stream in the pieces it arrived in).
public final class ReplayTransport: Transport, Sendable {
    /// Whether the transport answers from its fixture, records, or both.
    public enum Mode: String, Sendable, CaseIterable {
        /// Answers from the fixture only; never sends.
        case replay
        /// Sends every request through the recording transport and writes the fixture anew.
        case record
        /// Answers what the fixture has; sends and records what it lacks.
        case recordMissing = "missing"

        /// The environment variable read by ``fromEnvironment``: `COURIER_REPLAY`.
        public static let environmentVariable = "COURIER_REPLAY"

        /// The mode `COURIER_REPLAY` names: `record`, `missing` or `replay`; ``replay`` when it is
        /// unset or names none of them.
        public static var fromEnvironment: Mode {
            ProcessInfo.processInfo.environment[environmentVariable].flatMap { Mode(rawValue: $0.lowercased()) }
                ?? .replay
        }
    }

    /// The fixture file.
    public let fixture: URL
    /// The mode.
    public let mode: Mode
    let matching: ReplayMatching
    let redaction: FixtureRedaction
    let maxBodyBytes: Int
    let sourceLocation: SourceLocation
    private let nameError: ReplayError?
    let makeUpstream: @Sendable () -> any Transport

    /// A recorded exchange, with its request as matching sees it.
    struct Stored: Sendable {
        let entry: HAR.Entry
        let request: URLRequest
    }

    struct State: Sendable {
        var entries: [Stored]?
        var uses: [Int] = []
        /// Recordings started and not yet written, and who waits for them to be.
        var pendingRecordings = 0
        var recordingWaiters = ConditionWaiters<Void>()
        var upstream: (any Transport)?
    }

    let state = Locked(State())

    /// Creates a transport on a fixture file.
    /// - Parameters:
    ///   - fixture: The HAR file.
    ///   - mode: Default: ``Mode/fromEnvironment`` (replay unless `COURIER_REPLAY` says otherwise).
    ///   - upstream: The transport that records: made only when a request is sent. Default:
    ///     `URLSessionTransport()`.
    ///   - matching: How requests find their answers. Default: ``ReplayMatching/default``.
    ///   - redaction: What never reaches the fixture. Default: ``FixtureRedaction/default``.
    ///   - maxBodyBytes: The largest body written to a fixture. Default: 16 MiB.
    ///   - sourceLocation: Where issues are reported. Default: the caller.
    public init(
        fixture: URL, mode: Mode = .fromEnvironment,
        upstream: @escaping @autoclosure @Sendable () -> any Transport = URLSessionTransport(),
        matching: ReplayMatching = .default, redaction: FixtureRedaction = .default, maxBodyBytes: Int = 16 << 20,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        self.fixture = fixture
        self.mode = mode
        self.makeUpstream = upstream
        self.matching = matching
        self.redaction = redaction
        self.maxBodyBytes = max(0, maxBodyBytes)
        self.sourceLocation = sourceLocation
        self.nameError = nil
    }

    /// Creates a transport on the fixture `name` in `directory` (by default a `Fixtures` folder
    /// beside the calling source file): `Fixtures/showsTheUser.har`.
    /// - Parameters:
    ///   - name: The fixture's name, `.har` added when missing; may contain `/` for subfolders,
    ///     never `..`.
    ///   - directory: The folder. Default: `Fixtures` beside the file that calls this.
    ///   - mode: Default: ``Mode/fromEnvironment``.
    ///   - upstream: The transport that records. Default: `URLSessionTransport()`.
    ///   - matching: Default: ``ReplayMatching/default``.
    ///   - redaction: Default: ``FixtureRedaction/default``.
    ///   - filePath: The calling file. Default: the caller.
    ///   - sourceLocation: Where issues are reported. Default: the caller.
    public init(
        _ name: String, directory: URL? = nil, mode: Mode = .fromEnvironment,
        upstream: @escaping @autoclosure @Sendable () -> any Transport = URLSessionTransport(),
        matching: ReplayMatching = .default, redaction: FixtureRedaction = .default,
        filePath: StaticString = #filePath, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let folder =
            directory
            ?? URL(fileURLWithPath: "\(filePath)").deletingLastPathComponent().appendingPathComponent("Fixtures")
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        let valid = !name.isEmpty && !name.hasPrefix("/") && !parts.contains("..") && !parts.contains("")
        let file = name.hasSuffix(".har") ? name : name + ".har"
        self.fixture = folder.appendingPathComponent(valid ? file : "invalid.har")
        self.mode = mode
        self.makeUpstream = upstream
        self.matching = matching
        self.redaction = redaction
        self.maxBodyBytes = 16 << 20
        self.sourceLocation = sourceLocation
        self.nameError = valid ? nil : .invalidFixtureName(name)
    }

    // MARK: Transport

    public func send(_ transfer: Transfer) async throws -> Response {
        try checkName()
        if mode != .record {
            let request = try await transfer.bufferedRequest()
            if let stored = try await replay(request) {
                if let failure = stored.entry.response.error { throw Self.error(failure) }
                if stored.entry.response.cutShort == true { throw fail(cutShort(stored)) }
                return try await transfer.completeBuffered(
                    Self.response(stored.entry, for: request), sent: Int64(request.httpBody?.count ?? 0))
            }
            guard mode == .recordMissing else { throw try await noMatch(request) }
        }
        return try await recordSend(transfer)
    }

    public func stream(_ transfer: Transfer) async throws -> StreamedResponse {
        try checkName()
        if mode != .record {
            let request = try await transfer.bufferedRequest()
            if let stored = try await replay(request) {
                let response = Self.response(stored.entry, for: request)
                let head = Response(
                    statusCode: response.statusCode, data: Data(), request: request, response: response.response)
                // No head was recorded: the exchange failed before it.
                if let failure = stored.entry.response.error, stored.entry.response.status == 0 {
                    throw Self.error(failure)
                }
                return ChunkedAnswer.stream(
                    head: head, chunks: Self.chunks(response.data, sizes: stored.entry.response.chunks),
                    interval: .zero, clock: ContinuousClock(), limits: transfer.limits,
                    ending: stored.entry.response.cutShort == true
                        ? .fail(cutShort(stored))
                        : stored.entry.response.error.map { .fail(Self.error($0)) } ?? .finish)
            }
            guard mode == .recordMissing else { throw try await noMatch(request) }
        }
        return try await recordStream(transfer)
    }

    // MARK: Replaying

    /// The next recorded exchange that matches `request`, or `nil`.
    private func replay(_ request: URLRequest) async throws -> Stored? {
        let entries = try await load()
        let live = redaction.request(request, body: request.httpBody ?? Data()).request
        let matches = entries.indices.filter { matching.differences(live, entries[$0].request).isEmpty }
        guard !matches.isEmpty else { return nil }
        return state.withLock { state in
            let index = matches.first { state.uses[$0] == 0 } ?? matches[matches.count - 1]
            state.uses[index] += 1
            return entries[index]
        }
    }

    private func cutShort(_ stored: Stored) -> ReplayError {
        .recordingCutShort(request: "\(stored.entry.request.method) \(stored.entry.request.url)", fixture: fixture)
    }

    /// Waits until every exchange this transport began to record is written to the fixture —
    /// including a stream whose reader left early, which is written after the reader left.
    ///
    /// Call it before reading the fixture, or replaying it, in the same test. Returns at once when
    /// the calling task is cancelled (a test past its time limit ends instead of hanging).
    public func waitForRecordings() async {
        await state.wait(in: \.recordingWaiters, for: ()) { state, _ in state.pendingRecordings == 0 }
    }

    /// How many ``waitForRecordings()`` calls are waiting (tests of the transport itself).
    var recordingWaiterCount: Int { state.withLock { $0.recordingWaiters.count } }

    private func noMatch(_ request: URLRequest) async throws -> ReplayError {
        let entries = try await load()
        let live = redaction.request(request, body: request.httpBody ?? Data()).request
        let closest = entries.map { ($0, matching.differences(live, $0.request)) }
            .sorted { $0.1.count < $1.1.count }
            .prefix(3)
            .map {
                "\($0.0.entry.request.method) \($0.0.entry.request.url): differs in \($0.1.joined(separator: ", "))"
            }
        let described = "\(request.httpMethod ?? "GET") \(live.url?.absoluteString ?? "<no URL>")"
        return fail(.noMatch(request: described, fixture: fixture, closest: Array(closest)))
    }

    /// The largest fixture file read: 256 MiB. A larger one (or one that is not a regular file) is
    /// ``ReplayError/unreadableFixture(_:reason:)``.
    public static let maxFixtureBytes: UInt64 = 256 << 20

    /// The recorded exchanges, read once (none in record mode).
    func load() async throws -> [Stored] {
        if let entries = state.withLock({ $0.entries }) { return entries }
        var loaded: [Stored] = []
        if mode != .record {
            let (fixture, redaction) = (self.fixture, self.redaction)
            let outcome = try await BlockingIO.run { isCancelled -> Result<[Stored], ReplayError> in
                guard FileManager.default.fileExists(atPath: fixture.path) else {
                    return .failure(.fixtureMissing(fixture))
                }
                do {
                    // A regular file only (a FIFO would block the read for ever), and bounded.
                    let size = try FileBody.regularFileSize(fixture)
                    guard size <= Self.maxFixtureBytes else {
                        return .failure(
                            .unreadableFixture(fixture, reason: "larger than \(Self.maxFixtureBytes) bytes"))
                    }
                    let data = try FileBody.readAll(fixture, isCancelled: isCancelled)
                    let file = try JSONDecoder().decode(HAR.File.self, from: data)
                    if let reason = file.log.entries.lazy.compactMap(Self.invalidChunks).first {
                        return .failure(.unreadableFixture(fixture, reason: reason))
                    }
                    return .success(file.log.entries.map { Stored(entry: $0, request: Self.request($0, redaction)) })
                } catch {
                    return .failure(.unreadableFixture(fixture, reason: "\(error)"))
                }
            }
            switch outcome {
            case .success(let entries): loaded = entries
            case .failure(.fixtureMissing) where mode == .recordMissing: loaded = []
            case .failure(let error): throw fail(error)
            }
        }
        return state.withLock { state in
            if state.entries == nil {
                state.entries = loaded
                state.uses = Array(repeating: 0, count: loaded.count)
            }
            return state.entries ?? loaded
        }
    }

    /// A recorded request as matching sees it: after the same redaction as the live request, so
    /// a fixture Courier did not write (a browser's HAR), or one recorded before a name was added
    /// to the redaction, still matches a request with the same secret. Found by review.
    static func request(_ entry: HAR.Entry, _ redaction: FixtureRedaction) -> URLRequest {
        var request = URLRequest(url: URL(string: entry.request.url) ?? URL(fileURLWithPath: "/"))
        request.httpMethod = entry.request.method
        for header in entry.request.headers { request.addValue(header.value, forHTTPHeaderField: header.name) }
        if let post = entry.request.postData { request.httpBody = HAR.data(post.text, encoding: post.encoding) }
        return redaction.request(request, body: request.httpBody ?? Data()).request
    }

    /// The recorded response, for `request`.
    private static func response(_ entry: HAR.Entry, for request: URLRequest) -> Response {
        let recorded = entry.response
        let body = HAR.data(recorded.content.text, encoding: recorded.content.encoding) ?? Data()
        var fields: [String: String] = [:]
        for header in recorded.headers {
            fields[header.name] = fields[header.name].map { "\($0), \(header.value)" } ?? header.value
        }
        let http = request.url.flatMap {
            HTTPURLResponse(
                url: $0, statusCode: recorded.status, httpVersion: recorded.httpVersion, headerFields: fields)
        }
        return Response(statusCode: recorded.status, data: body, request: request, response: http)
    }

    /// Why an entry's `_chunks` cannot be the pieces of its body (a negative size, sizes whose sum
    /// overflows or differs from the body's size), or `nil` when they can (or are absent).
    static func invalidChunks(_ entry: HAR.Entry) -> String? {
        guard let sizes = entry.response.chunks else { return nil }
        let body = HAR.data(entry.response.content.text, encoding: entry.response.content.encoding) ?? Data()
        var total = 0
        for size in sizes {
            guard size >= 0 else { return "a _chunks size is negative (\(size))" }
            let (sum, overflow) = total.addingReportingOverflow(size)
            guard !overflow, sum <= body.count else {
                return "the _chunks sizes add up to more than the body's \(body.count) bytes"
            }
            total = sum
        }
        guard total == body.count else {
            return "the _chunks sizes add up to \(total) bytes, the body has \(body.count)"
        }
        return nil
    }

    /// The body in the pieces it was recorded in (checked by ``invalidChunks(_:)`` when the
    /// fixture was read; one piece when there are none).
    private static func chunks(_ body: Data, sizes: [Int]?) -> [Data] {
        guard let sizes else { return body.isEmpty ? [] : [body] }
        var offset = body.startIndex
        return sizes.compactMap { size in
            guard size >= 0, size <= body.endIndex - offset else { return nil }
            defer { offset += size }
            return body.subdata(in: offset..<offset + size)
        }
    }

    private static func error(_ failure: HAR.Failure) -> any Error {
        if failure.domain == NSURLErrorDomain {
            #if canImport(FoundationNetworking)
                // Failable on Linux only.
                return URLError(URLError.Code(rawValue: failure.code) ?? .unknown)
            #else
                return URLError(URLError.Code(rawValue: failure.code))
            #endif
        }
        return NSError(
            domain: failure.domain, code: failure.code, userInfo: [NSLocalizedDescriptionKey: failure.description])
    }

    // MARK: Failures

    private func checkName() throws {
        if let nameError { throw fail(nameError) }
    }

    /// Records `error` as a Swift Testing issue where the transport was made, and returns it.
    func fail(_ error: ReplayError) -> ReplayError {
        Issue.record(Comment(rawValue: error.description), sourceLocation: sourceLocation)
        return error
    }
}
