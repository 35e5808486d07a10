import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Attacks on issue 29's shortcuts: the default mappings called directly (`mapsByDefault`), the
/// cancellation checks removed from `prepare`, the retry policy passed to the state machine, the
/// `Content-Length` fields read once, and `Deduplication.mergesNothing`.
@Suite(.timeLimit(.minutes(1))) struct PipelineShortcutAttackTests {
    struct Upload: TargetType {
        var task: HTTPTask
        var headers: [String: String] = [:]
        var method: HTTPMethod = .post
        var retryPolicy: RetryPolicy?
        var validation: ValidationType { .successCodes }
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "upload" }
    }

    /// A target that cancels the task mapping it, while the endpoint is built from it.
    struct SelfCancelling: TargetType {
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "cancelling" }
        var headers: [String: String] {
            withUnsafeCurrentTask { $0?.cancel() }
            return [:]
        }
    }

    /// Records each hook with the attempt its context carries.
    struct AttemptLog: Plugin {
        let log: EventLog
        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            log.append("prepare \(context.attempt)")
            return request
        }
        func willSend(_ request: URLRequest, context: RequestContext) async {
            log.append("willSend \(context.attempt)")
        }
        func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {
            log.append("didReceive \(context.attempt) \(RecordingPlugin.describe(result))")
        }
        func process(
            _ result: Result<Response, CourierError>, context: RequestContext
        ) async -> Result<Response, CourierError> {
            log.append("process \(context.attempt) \(RecordingPlugin.describe(result))")
            return result
        }
        func didFinish(
            _ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext
        ) async {
            log.append("didFinish \(context.attempt) attempts=\(metrics.attempts.count)")
        }
    }

    /// Cancels the task running it in `prepare` and returns normally (a plugin that ignores it).
    struct CancellingPlugin: Plugin {
        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            withUnsafeCurrentTask { $0?.cancel() }
            return request
        }
    }

    /// The three ways of asking for the default mappings.
    enum Spelling: CaseIterable, Sendable {
        case omitted, explicitNil, explicitFunctions, customEndpointOnly, customRequestOnly
    }

    static func provider<T: TargetType>(
        _ spelling: Spelling, _: T.Type = T.self, transport: any Transport, plugins: [any Plugin] = [],
        retryPolicy: RetryPolicy = .disabled
    ) -> Provider<T> {
        switch spelling {
        case .omitted:
            Provider<T>(transport: transport, plugins: plugins, retryPolicy: retryPolicy)
        case .explicitNil:
            Provider<T>(
                endpointClosure: nil, requestClosure: nil, transport: transport, plugins: plugins,
                retryPolicy: retryPolicy)
        case .explicitFunctions:
            Provider<T>(
                endpointClosure: Provider<T>.defaultEndpointMapping(for:),
                requestClosure: Provider<T>.defaultRequestMapping(for:), transport: transport, plugins: plugins,
                retryPolicy: retryPolicy)
        case .customEndpointOnly:
            Provider<T>(
                endpointClosure: { try Endpoint(target: $0) }, transport: transport, plugins: plugins,
                retryPolicy: retryPolicy)
        case .customRequestOnly:
            Provider<T>(
                requestClosure: { try $0.urlRequest() }, transport: transport, plugins: plugins,
                retryPolicy: retryPolicy)
        }
    }

    static func outcome<T: TargetType>(
        _ provider: Provider<T>, _ target: T
    ) async -> Result<Response, CourierError> {
        do throws(CourierError) {
            return .success(try await provider.request(target))
        } catch {
            return .failure(error)
        }
    }

    static func withFile(bytes: Int, _ body: (URL) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-atk-\(UUID().uuidString)")
        try Data(repeating: 0x41, count: bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await body(file)
    }

    // MARK: Default mappings, given or omitted

    /// Omitting the mappings, passing `nil`, passing the default functions, or a custom closure
    /// for one of them: the same request on the wire and the same hooks, in the same order.
    @Test(arguments: Spelling.allCases)
    func everySpellingOfTheDefaultMappingsSendsTheSameRequest(spelling: Spelling) async throws {
        let targets: [TestAPI] = [.plain, .search("a b&c"), .create(Item(id: 1, name: "x")), .upload(Data("hi".utf8))]
        let reference = StubTransport().on({ _ in true }, .status(200))
        let transport = StubTransport().on({ _ in true }, .status(200))
        let referenceLog = EventLog()
        let log = EventLog()
        let base = Self.provider(
            .omitted, TestAPI.self, transport: reference, plugins: [RecordingPlugin("A", log: referenceLog)])
        let provider = Self.provider(
            spelling, TestAPI.self, transport: transport, plugins: [RecordingPlugin("A", log: log)])
        for target in targets {
            let expected = try await base.request(target)
            let response = try await provider.request(target)
            #expect(response.statusCode == expected.statusCode)
            #expect(response.metrics?.attempts.count == 1)
        }
        #expect(log.all == referenceLog.all)
        let sent = transport.requests
        let expected = reference.requests
        try #require(sent.count == targets.count && expected.count == targets.count)
        for (one, other) in zip(sent, expected) {
            #expect(one.request.url == other.request.url)
            #expect(one.request.httpMethod == other.request.httpMethod)
            #expect(one.request.allHTTPHeaderFields == other.request.allHTTPHeaderFields)
            #expect(one.body == other.body)
        }
    }

    /// A request refused before it is sent (a GET with a body) fails the same way whichever
    /// spelling, and plugins see the same hooks.
    @Test(arguments: Spelling.allCases)
    func everySpellingOfTheDefaultMappingsFailsTheSameWay(spelling: Spelling) async {
        let transport = StubTransport(unmatched: .throwError)
        let log = EventLog()
        let provider = Self.provider(
            spelling, Upload.self, transport: transport, plugins: [RecordingPlugin("A", log: log)])
        let result = await Self.outcome(provider, Upload(task: .data(Data("x".utf8)), method: .get))
        guard case .failure(.requestMapping) = result else {
            Issue.record("expected requestMapping, got \(result)")
            return
        }
        #expect(transport.requests.isEmpty)
        #expect(log.all == ["A.prepare", "A.willSend", "A.didReceive(requestMapping)", "A.process(requestMapping)"])
    }

    /// A multipart form with a file part (the default request mapping's off-the-pool path, kept by
    /// falling back to the closure): the same body whichever spelling.
    @Test func aMultipartFileFormSendsTheSameBodyWithEverySpelling() async throws {
        try await Self.withFile(bytes: 300) { file in
            let form = MultipartFormData(parts: [.init(name: "f", fileURL: file)])
            var bodies: [Data?] = []
            for spelling in Spelling.allCases {
                let transport = StubTransport().on({ _ in true }, .status(204))
                let provider = Self.provider(spelling, Upload.self, transport: transport)
                _ = try await provider.request(Upload(task: .uploadMultipart(form)))
                bodies.append(transport.requests.first?.body)
            }
            #expect(bodies.count == Spelling.allCases.count)
            #expect(bodies.allSatisfy { $0 != nil && $0 == bodies.first! })
        }
    }

    /// The public closures still hold the default functions when none was given.
    @Test func theDefaultClosuresAreStillExposed() async throws {
        let provider = Provider<TestAPI>(transport: StubTransport(unmatched: .throwError))
        let endpoint = try await provider.endpointClosure(.search("q"))
        let request = try await provider.requestClosure(endpoint)
        #expect(request.url?.absoluteString == "https://api.example.com/v1/search?q=q")
        #expect(provider.mapsByDefault == (true, true))
    }

    // MARK: Cancellation

    /// Cancelled in the last plugin's `prepare` (which ignores it): nothing is sent, the caller
    /// gets `.cancelled`, and `process` and `didFinish` see attempt `0`, as `RequestContext.attempt`
    /// documents for a call that sent nothing (and as before the check at the end of `prepare`
    /// was removed).
    @Test func cancelledInTheLastPluginsPrepareSendsNothingAndReportsAttemptZero() async {
        let transport = StubTransport(unmatched: .throwError)
        let log = EventLog()
        let provider = Provider<TestAPI>(transport: transport, plugins: [AttemptLog(log: log), CancellingPlugin()])
        let result = await Task { await Self.outcome(provider, .plain) }.value
        #expect(result.failure?.isCancellation == true)
        #expect(transport.requests.isEmpty)
        #expect(
            log.all == [
                "prepare 0", "didReceive 0 cancelled", "process 0 cancelled", "didFinish 0 attempts=0",
            ])
    }

    /// The same cancellation one plugin earlier (the check before the next plugin sees it): the
    /// reference for the test above.
    @Test func cancelledInAPluginBeforeAnotherReportsAttemptZero() async {
        let transport = StubTransport(unmatched: .throwError)
        let log = EventLog()
        let provider = Provider<TestAPI>(transport: transport, plugins: [CancellingPlugin(), AttemptLog(log: log)])
        let result = await Task { await Self.outcome(provider, .plain) }.value
        #expect(result.failure?.isCancellation == true)
        #expect(transport.requests.isEmpty)
        #expect(log.all == ["didReceive 0 cancelled", "process 0 cancelled", "didFinish 0 attempts=0"])
    }

    /// A custom request closure that cancels its task (and ignores it) after the default endpoint
    /// mapping: nothing is sent and no plugin's `prepare` runs; without plugins the check before
    /// the send stops it.
    @Test(arguments: [false, true])
    func cancelledInACustomRequestClosureSendsNothing(withPlugins: Bool) async {
        let transport = StubTransport(unmatched: .throwError)
        let log = EventLog()
        let provider = Provider<TestAPI>(
            requestClosure: { endpoint in
                withUnsafeCurrentTask { $0?.cancel() }
                return try endpoint.urlRequest()
            }, transport: transport, plugins: withPlugins ? [AttemptLog(log: log)] : [])
        let result = await Task { await Self.outcome(provider, .plain) }.value
        #expect(result.failure?.isCancellation == true)
        #expect(transport.requests.isEmpty)
        #expect(!log.all.contains("prepare 0"))
    }

    /// A custom endpoint closure that cancels its task: the request mapping is not run (the
    /// check after a custom endpoint closure stays), and nothing is sent.
    @Test func cancelledInACustomEndpointClosureSkipsTheRequestMapping() async {
        let transport = StubTransport(unmatched: .throwError)
        let mapped = Locked(0)
        let provider = Provider<TestAPI>(
            endpointClosure: { target in
                withUnsafeCurrentTask { $0?.cancel() }
                return try Endpoint(target: target)
            },
            requestClosure: { endpoint in
                mapped.withLock { $0 += 1 }
                return try endpoint.urlRequest()
            }, transport: transport)
        let result = await Task { await Self.outcome(provider, .plain) }.value
        #expect(result.failure?.isCancellation == true)
        #expect(mapped.withLock { $0 } == 0)
        #expect(transport.requests.isEmpty)
    }

    /// A target that cancels the task while the default endpoint mapping reads it: nothing is
    /// sent and the caller gets `.cancelled`, with either request mapping.
    @Test(arguments: [Spelling.omitted, .customRequestOnly, .customEndpointOnly])
    func aTargetCancellingWhileMappedSendsNothing(spelling: Spelling) async {
        let transport = StubTransport(unmatched: .throwError)
        let provider = Self.provider(spelling, SelfCancelling.self, transport: transport)
        let result = await Task { await Self.outcome(provider, SelfCancelling()) }.value
        #expect(result.failure?.isCancellation == true)
        #expect(transport.requests.isEmpty)
    }

    /// A task cancelled before `request` starts sends nothing, with every spelling.
    @Test(arguments: Spelling.allCases)
    func alreadyCancelledSendsNothingWithEverySpelling(spelling: Spelling) async {
        let transport = StubTransport(unmatched: .throwError)
        let log = EventLog()
        let provider = Self.provider(spelling, TestAPI.self, transport: transport, plugins: [AttemptLog(log: log)])
        let result = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await Self.outcome(provider, .plain)
        }.value
        #expect(result.failure?.isCancellation == true)
        #expect(transport.requests.isEmpty)
        #expect(log.all == ["didReceive 0 cancelled", "process 0 cancelled", "didFinish 0 attempts=0"])
    }

    // MARK: Retries

    /// The provider's policy (3 attempts) and a target's own (2 attempts) both end in
    /// `retryLimitReached` after that many sends, with every spelling of the mappings.
    @Test(arguments: Spelling.allCases)
    func retriesFollowTheProviderAndTargetPolicies(spelling: Spelling) async {
        let three = RetryPolicy(maxAttempts: 3, baseDelay: .zero, maxDelay: .zero, jitter: .none)
        let two = RetryPolicy(maxAttempts: 2, baseDelay: .zero, maxDelay: .zero, jitter: .none)
        for (target, attempts) in [
            (Upload(task: .plain, method: .get), 3), (Upload(task: .plain, method: .get, retryPolicy: two), 2),
        ] {
            let transport = StubTransport().on({ _ in true }, .status(503))
            let provider = Self.provider(spelling, Upload.self, transport: transport, retryPolicy: three)
            let result = await Self.outcome(provider, target)
            guard case .failure(.retryLimitReached(let made, let last)) = result else {
                Issue.record("expected retryLimitReached, got \(result)")
                continue
            }
            #expect(made == attempts)
            #expect(last.response?.statusCode == 503)
            #expect(transport.requests.count == attempts)
        }
    }

    // MARK: De-duplication

    /// `mergesNothing` is exactly "merges no method": `.disabled` and `.methods([])` merge
    /// nothing; `.allMethods` (every method, `nil`) and any non-empty set merge.
    @Test func mergesNothingIsExactlyNoMethod() {
        #expect(Deduplication.disabled.mergesNothing)
        #expect(Deduplication.methods([]).mergesNothing)
        #expect(!Deduplication.enabled.mergesNothing)
        #expect(!Deduplication.allMethods.mergesNothing)
        #expect(!Deduplication.methods([.post]).mergesNothing)
        for policy in [Deduplication.disabled, .methods([]), .enabled, .allMethods, .methods([.delete])] {
            #expect(policy.mergesNothing == (policy == .disabled))
        }
    }

    // MARK: Content-Length

    /// A request closure (not a plugin) that sets the fields itself: `fields` replace the mapped
    /// request's.
    static func provider(fields: [String: String], transport: StubTransport) -> Provider<Upload> {
        Provider<Upload>(
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                var all = request.allHTTPHeaderFields ?? [:]
                for (name, value) in fields { all[name] = value }
                request.allHTTPHeaderFields = all
                return request
            }, transport: transport)
    }

    /// Refused before anything is sent: `Content-Length` with `Transfer-Encoding` in any case,
    /// two `Content-Length` fields (names differing in case) whatever the body, a wrong length set
    /// by a request closure.
    @Test(arguments: [
        ["Content-Length": "5", "transfer-encoding": "chunked"],
        ["content-length": "5", "TRANSFER-ENCODING": "chunked"],
        ["Content-Length": "5", "transfer-encoding": "chunked", "Transfer-Encoding": "chunked"],
        ["Content-Length": "5", "CONTENT-LENGTH": "5"],
        ["Content-Length": "4"],
        ["content-length": "05 "],
    ])
    func contentLengthFieldsARequestClosureSetAreChecked(fields: [String: String]) async throws {
        let transport = StubTransport().on({ _ in true }, .status(204))
        let provider = Self.provider(fields: fields, transport: transport)
        let result = await Self.outcome(provider, Upload(task: .data(Data("hello".utf8))))
        switch result {
        case .failure(.requestMapping(let message)):
            #expect(message.contains("Content-Length"))
            #expect(transport.requests.isEmpty)
        case .failure(let error):
            Issue.record("\(error)")
        case .success:
            // Where the request keeps one field of two, the one kept is the body's length.
            let kept = transport.requests.first?.request.allHTTPHeaderFields ?? [:]
            #expect(kept.filter { $0.key.lowercased() == "content-length" }.map(\.value) == ["5"])
            #expect(!kept.keys.contains { $0.lowercased() == "transfer-encoding" })
        }
    }

    /// Sent: no headers at all, `Transfer-Encoding` alone (twice, in two cases), a right length set
    /// by a request closure, `Content-Length: 0` on a GET without a body.
    @Test(arguments: [
        ([:], HTTPMethod.post, true),
        (["transfer-encoding": "chunked", "Transfer-Encoding": "chunked"], .post, true),
        (["content-length": "5"], .post, true),
        (["Content-Length": "0"], .get, false),
    ])
    func acceptableFieldsAreSent(fields: [String: String], method: HTTPMethod, body: Bool) async throws {
        let transport = StubTransport().on({ _ in true }, .status(204))
        let provider = Self.provider(fields: fields, transport: transport)
        let task: HTTPTask = body ? .data(Data("hello".utf8)) : .plain
        _ = try await provider.request(Upload(task: task, method: method))
        #expect(transport.requests.count == 1)
    }

    /// A file upload and a multipart upload with two `Content-Length` fields of the right length
    /// (names differing in case), set by a request closure: refused, or only one goes out.
    @Test func fileAndMultipartUploadsWithTwoContentLengthsSendNoSecond() async throws {
        try await Self.withFile(bytes: 100) { file in
            let form = MultipartFormData(parts: [.init(name: "f", fileURL: file)])
            let formLength = try await form.encodedBody().count
            let cases: [(HTTPTask, Int)] = [(.uploadFile(file), 100), (.uploadMultipart(form), formLength)]
            for (task, length) in cases {
                let transport = StubTransport().on({ _ in true }, .status(204))
                let fields = ["Content-Length": "\(length)", "content-length": "\(length)"]
                let provider = Self.provider(fields: fields, transport: transport)
                let result = await Self.outcome(provider, Upload(task: task))
                if case .failure(let error) = result {
                    guard case .requestMapping(let message) = error else {
                        Issue.record("\(error)")
                        continue
                    }
                    #expect(message.contains("two Content-Length"))
                    #expect(transport.requests.isEmpty)
                } else {
                    let kept = transport.requests.first?.request.allHTTPHeaderFields ?? [:]
                    #expect(kept.filter { $0.key.lowercased() == "content-length" }.count == 1)
                }
            }
        }
    }
}
