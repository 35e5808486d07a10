import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``Plugin/implementedHooks``: a provider calls a plugin's hooks that it declares, and only those,
/// in the same order and with the same timing as if every hook were called.
@Suite(.timeLimit(.minutes(2))) struct PluginHooksTests {
    typealias Call = PipelineTests.Call

    /// Implements all seven hooks and logs each call as "name.hook attempt"; declares `declared`.
    struct Declaring: Plugin {
        let name: String
        let declared: PluginHooks
        let log: EventLog
        /// Each `didFinish`'s metrics.
        let finished = Locked<[RequestMetrics]>([])
        var implementedHooks: PluginHooks { declared }

        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            record("prepare", context)
            return request
        }
        func willSend(_ request: URLRequest, context: RequestContext) async { record("willSend", context) }
        func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {
            record("didReceive", context)
        }
        func willRetry(_ request: URLRequest, after error: CourierError, delay: Duration, context: RequestContext) async
        {
            record("willRetry", context)
        }
        func willRefreshCredential(_ request: URLRequest, context: RequestContext) async {
            record("willRefreshCredential", context)
        }
        func process(
            _ result: Result<Response, CourierError>, context: RequestContext
        ) async -> Result<Response, CourierError> {
            record("process", context)
            // Turns every answer into a failure: a `process` that is not called cannot.
            return .failure(.invalidUse("processed by \(name)"))
        }
        func didFinish(_ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext) async
        {
            record("didFinish", context)
            finished.withLock { $0.append(metrics) }
        }
        private func record(_ hook: String, _ context: RequestContext) {
            log.append("\(name).\(hook) \(context.attempt)")
        }
    }

    static let hookNames: [(PluginHooks, String)] = [
        (.prepare, "prepare"), (.willSend, "willSend"), (.didReceive, "didReceive"), (.willRetry, "willRetry"),
        (.willRefreshCredential, "willRefreshCredential"), (.process, "process"), (.didFinish, "didFinish"),
    ]

    /// Whether `event` ("name.hook attempt") is a call of a hook in `hooks`.
    static func event(_ event: String, isIn hooks: PluginHooks) -> Bool {
        let hook = event.split(separator: ".")[1].split(separator: " ")[0]
        return hookNames.contains { hooks.contains($0.0) && $0.1 == hook }
    }

    /// A call that reaches every hook: a refused credential (refresh), a 503 (retry), then a 200.
    static func callEveryHook(with plugins: [any Plugin]) async -> Result<Response, CourierError> {
        let provider = Provider<Call>(
            transport: PipelineTests.Statuses([401, 503, 200]), plugins: plugins,
            retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .zero, jitter: .none),
            authentication: Authentication(PipelineTests.Renewing(), credential: 0))
        do {
            return .success(try await provider.request(Call()))
        } catch {
            return .failure(error)
        }
    }

    static let declarations: [PluginHooks] =
        [.all, []] + hookNames.map(\.0) + [
            [.willSend, .didReceive], [.prepare, .process], [.willRetry, .willRefreshCredential, .didFinish],
        ]

    @Test(arguments: declarations)
    func onlyTheDeclaredHooksAreCalled(declared: PluginHooks) async throws {
        let everyLog = EventLog()
        _ = await Self.callEveryHook(with: [Declaring(name: "P", declared: .all, log: everyLog)])
        // The reference: every hook, in order, over a refresh, a retry and the final answer.
        #expect(
            everyLog.all == [
                "P.prepare 0",
                "P.willSend 1", "P.didReceive 1", "P.willRefreshCredential 1",
                "P.willSend 1", "P.didReceive 1", "P.willRetry 1",
                "P.willSend 2", "P.didReceive 2",
                "P.process 2", "P.didFinish 2",
            ])
        let log = EventLog()
        let result = await Self.callEveryHook(with: [Declaring(name: "P", declared: declared, log: log)])
        #expect(log.all == everyLog.all.filter { Self.event($0, isIn: declared) })
        // `process` turns the answer into a failure only when it is called.
        if declared.contains(.process) {
            #expect(result.failure?.isInvalidUse == true)
        } else {
            #expect(result.success?.statusCode == 200)
        }
    }

    /// Plugins that declare different hooks keep the provider's order for each hook.
    @Test func pluginsKeepTheirOrderHookByHook() async {
        let log = EventLog()
        _ = await Self.callEveryHook(with: [
            Declaring(name: "A", declared: [.prepare, .willSend, .didFinish], log: log),
            Declaring(name: "B", declared: .all, log: log),
            Declaring(name: "C", declared: [.willSend, .didReceive, .didFinish], log: log),
        ])
        #expect(
            log.all == [
                "A.prepare 0", "B.prepare 0",
                "A.willSend 1", "B.willSend 1", "C.willSend 1",
                "B.didReceive 1", "C.didReceive 1", "B.willRefreshCredential 1",
                "A.willSend 1", "B.willSend 1", "C.willSend 1",
                "B.didReceive 1", "C.didReceive 1", "B.willRetry 1",
                "A.willSend 2", "B.willSend 2", "C.willSend 2",
                "B.didReceive 2", "C.didReceive 2",
                "B.process 2",
                "A.didFinish 2", "B.didFinish 2", "C.didFinish 2",
            ])
    }

    /// A plugin declaring none of its hooks is never called, and the call goes on as without it.
    @Test func aPluginDeclaringNoHooksIsNeverCalled() async throws {
        let log = EventLog()
        let provider = Provider<Call>(
            stubClosure: Provider.immediatelyStub, plugins: [Declaring(name: "P", declared: [], log: log)])
        let response = try await provider.request(Call(id: 3))
        #expect(response.data == Call(id: 3).sampleData)
        #expect(log.all.isEmpty)
    }

    /// A streamed response's `didFinish` (at the body's end) runs for the plugins that declare it.
    // `process` is left out: `Declaring`'s turns every answer into a failure.
    @Test(arguments: [PluginHooks.didFinish, PluginHooks.all.subtracting(.process), .willSend])
    func aStreamsDidFinishFollowsTheDeclaration(declared: PluginHooks) async throws {
        let log = EventLog()
        let transport = RecordingTransport { Response(statusCode: 200, data: Data("streamed".utf8), request: $0) }
        let provider = Provider<Call>(
            transport: transport, plugins: [Declaring(name: "P", declared: declared, log: log)])
        var body = Data()
        for try await chunk in try await provider.stream(Call()).chunks { body.append(chunk) }
        #expect(body == Data("streamed".utf8))
        #expect(log.all.contains("P.didFinish 1") == declared.contains(.didFinish))
        #expect(log.all.allSatisfy { Self.event($0, isIn: declared) })
    }

    // MARK: - Timing with some hooks skipped

    /// Moves the test clock in each hook it declares: 1 ms in `prepare`, 10 ms in `willSend`,
    /// 100 ms in `didReceive`, 1 s in `process`. May cancel its own task in `prepare`.
    struct Mover: Plugin {
        let clock: TestClock
        let implementedHooks: PluginHooks
        var cancelsInPrepare = false

        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            clock.advance(by: .milliseconds(1))
            if cancelsInPrepare { withUnsafeCurrentTask { $0?.cancel() } }
            return request
        }
        func willSend(_ request: URLRequest, context: RequestContext) async { clock.advance(by: .milliseconds(10)) }
        func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {
            clock.advance(by: .milliseconds(100))
        }
        func process(
            _ result: Result<Response, CourierError>, context: RequestContext
        ) async -> Result<Response, CourierError> {
            clock.advance(by: .seconds(1))
            return result
        }
    }

    struct Timing: Sendable, CustomTestStringConvertible {
        let declared: PluginHooks
        /// Time in the declared hooks, in milliseconds: the plugins' time and the call's total.
        let plugins: Int
        /// When the attempt starts (after `prepare` and `willSend`), in milliseconds.
        let attemptStart: Int
        var testDescription: String { "declared \(declared.rawValue)" }
    }

    /// The plugins' time is the declared hooks' time, and the clock readings that skipped hooks
    /// no longer take stand for "now" where they still can (an attempt's start, the call's end).
    @Test(arguments: [
        Timing(declared: .all, plugins: 1_111, attemptStart: 11),
        Timing(declared: .prepare, plugins: 1, attemptStart: 1),
        Timing(declared: .willSend, plugins: 10, attemptStart: 10),
        Timing(declared: .didReceive, plugins: 100, attemptStart: 0),
        Timing(declared: .process, plugins: 1_000, attemptStart: 0),
        Timing(declared: [.prepare, .didReceive], plugins: 101, attemptStart: 1),
        Timing(declared: [.willSend, .process], plugins: 1_010, attemptStart: 10),
        Timing(declared: [], plugins: 0, attemptStart: 0),
    ])
    func pluginTimeIsTheDeclaredHooksTime(_ timing: Timing) async throws {
        let clock = TestClock()
        let provider = Provider<Call>(
            stubClosure: Provider.immediatelyStub,
            plugins: [Mover(clock: clock, implementedHooks: timing.declared)], clock: clock)
        let metrics = try #require(try await provider.request(Call()).metrics)
        #expect(metrics.mapping == .zero)
        #expect(metrics.plugins == .milliseconds(timing.plugins))
        #expect(metrics.total == .milliseconds(timing.plugins))
        let attempt = try #require(metrics.attempts.first)
        #expect(attempt.start == .milliseconds(timing.attemptStart))
        #expect(attempt.end == .milliseconds(timing.attemptStart))
    }

    /// A call cancelled in `prepare` reaches `didReceive` once; a plugin that declares only
    /// `didReceive` sees it, and its time is counted, with no `process` to run after it.
    @Test func aCancelledCallReachesADidReceiveDeclaredAlone() async throws {
        let clock = TestClock()
        let log = EventLog()
        let recorder = Declaring(name: "P", declared: [.didReceive, .didFinish], log: log)
        let plugins: [any Plugin] = [
            Mover(clock: clock, implementedHooks: .prepare, cancelsInPrepare: true),
            Mover(clock: clock, implementedHooks: .didReceive), recorder,
        ]
        let provider = Provider<Call>(stubClosure: Provider.immediatelyStub, plugins: plugins, clock: clock)
        let outcome = await Task { () -> CourierError? in
            do throws(CourierError) {
                _ = try await provider.request(Call())
                return nil
            } catch {
                return error
            }
        }.value
        #expect(outcome?.isCancellation == true)
        #expect(log.all == ["P.didReceive 0", "P.didFinish 0"])
        let metrics = try #require(recorder.finished.withLock { $0.first })
        #expect(metrics.attempts.isEmpty)
        #expect(metrics.plugins == .milliseconds(1 + 100))
        #expect(metrics.total == .milliseconds(1 + 100))
    }

    /// Signs slowly (5 s on the test clock) and gives the request a method the final checks
    /// refuse, so the attempt ends without being sent.
    struct SlowRefusedSigner: Authenticator {
        let clock: TestClock
        func apply(_ credential: Int, to request: inout URLRequest) {
            clock.advance(by: .seconds(5))
            request.httpMethod = "NOT A TOKEN"
        }
        func refresh(_ credential: Int) async throws -> Int { credential }
    }

    /// An attempt refused before it is sent ends the call when it is refused, whether or not a
    /// plugin's `process` runs after it (without one, the total used to stop at the last reading
    /// before signing).
    @Test(arguments: [PluginHooks.didFinish, .all])
    func aCallWhoseAttemptIsNotSentEndsWhenItIsRefused(declared: PluginHooks) async throws {
        let clock = TestClock()
        let recorder = Declaring(name: "P", declared: declared, log: EventLog())
        let provider = Provider<Call>(
            transport: PipelineTests.Statuses([200]), plugins: [recorder], clock: clock,
            authentication: Authentication(SlowRefusedSigner(clock: clock), credential: 0))
        await #expect(throws: CourierError.self) { try await provider.request(Call()) }
        let metrics = try #require(recorder.finished.withLock { $0.first })
        #expect(metrics.attempts.isEmpty)
        #expect(metrics.total == .seconds(5))
    }

    /// A refused response's error body, decoded after the last attempt, is part of the call's
    /// total (the decoder moves the test clock by 2 s).
    @Test(arguments: [PluginHooks.didFinish, .all])
    func decodingTheErrorBodyIsPartOfTheTotal(declared: PluginHooks) async throws {
        struct Refusal: Error {}
        let clock = TestClock()
        let recorder = Declaring(name: "P", declared: declared, log: EventLog())
        let errorBody = ErrorBody { _ in
            clock.advance(by: .seconds(2))
            return Refusal()
        }
        let provider = Provider<Call>(
            transport: PipelineTests.Statuses([404]), plugins: [recorder], clock: clock, errorBody: errorBody)
        await #expect(throws: CourierError.self) { try await provider.request(Call()) }
        let metrics = try #require(recorder.finished.withLock { $0.first })
        #expect(metrics.attempts.count == 1)
        #expect(metrics.total == .seconds(2))
    }

    // MARK: - The built-in plugins

    /// A target that asks for a bearer token (``AccessTokenPlugin``).
    struct Signed: AccessTokenAuthorizable {
        var headers: [String: String] { [:] }
        var sampleData: Data { Data() }
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "items" }
        var authorizationType: AuthorizationType? { .bearer }
    }

    /// Refreshable credentials in a header of their own, so a plugin's `Authorization` stays.
    struct Stamping: Authenticator {
        func apply(_ credential: Int, to request: inout URLRequest) {
            request.setValue("\(credential)", forHTTPHeaderField: "X-Credential")
        }
        func refresh(_ credential: Int) async throws -> Int { credential + 1 }
    }

    /// What a built-in plugin did over a call that reaches every hook (a refresh, a retry, the
    /// answer): its log lines, its activity changes, the headers of every request sent.
    static func observe(_ plugin: (EventLog) -> any Plugin, everyHook: Bool) async -> [String] {
        let log = EventLog()
        let made = plugin(log)
        let transport = PipelineTests.Statuses([401, 503, 200])
        let provider = Provider<Signed>(
            transport: transport, plugins: [everyHook ? EveryHookPlugin(made) : made],
            retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .zero, jitter: .none),
            authentication: Authentication(Stamping(), credential: 0))
        _ = try? await provider.request(Signed())
        let sent = transport.sent.withLock { $0 }.map { request in
            let fields = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }
            return "sent " + fields.map { "\($0)=\($1)" }.joined(separator: ",")
        }
        // Each run has a provider of its own, so the call numbers in the lines match.
        return log.all + sent
    }

    enum BuiltIn: String, CaseIterable, Sendable {
        case logger, loggerWithoutRetries, loggerVerbose, activity, accessToken, credentials

        func make(_ log: EventLog) -> any Plugin {
            switch self {
            case .logger: NetworkLoggerPlugin.logger(output: { log.append($0) })
            case .loggerWithoutRetries: NetworkLoggerPlugin.logger([.method, .url], output: { log.append($0) })
            case .loggerVerbose: NetworkLoggerPlugin.logger(.verbose, output: { log.append($0) })
            case .activity: NetworkActivityPlugin { change, _ in log.append("\(change)") }
            case .accessToken: AccessTokenPlugin { _ in "token" }
            case .credentials: CredentialsPlugin { _ in ("user", "secret") }
            }
        }

        var declared: PluginHooks {
            switch self {
            case .logger, .loggerVerbose: [.willSend, .didReceive, .willRetry, .willRefreshCredential]
            case .loggerWithoutRetries: [.willSend, .didReceive]
            case .activity: [.willSend, .didReceive]
            case .accessToken, .credentials: .prepare
            }
        }
    }

    @Test(arguments: BuiltIn.allCases)
    func aBuiltInPluginDoesAloneWhatItDoesWithEveryHookCalled(_ builtIn: BuiltIn) async {
        #expect(builtIn.make(EventLog()).implementedHooks == builtIn.declared)
        let alone = await Self.observe(builtIn.make, everyHook: false)
        let everyHook = await Self.observe(builtIn.make, everyHook: true)
        #expect(!alone.isEmpty)
        #expect(alone == everyHook)
    }
}

extension CourierError {
    fileprivate var isInvalidUse: Bool {
        if case .invalidUse = self { return true }
        return false
    }
}
