import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where policies meet: refresh and retries, shared requests and deadlines, the request context
/// and metrics. Each of the first tests failed before the pipeline became a state machine.
@Suite(.timeLimit(.minutes(2))) struct PipelineTests {
    struct Call: TargetType {
        var headers: [String: String] { [:] }
        var id = 1
        var timeout: Duration? = nil
        var retryPolicy: RetryPolicy? = nil
        var validation: ValidationType = .successCodes
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "items/\(id)" }
        var sampleData: Data { Data("sample \(id)".utf8) }
    }

    /// Answers with these statuses in order (the last one from then on), recording each request.
    final class Statuses: Transport {
        let statuses: [Int]
        let sent = Locked<[URLRequest]>([])
        init(_ statuses: [Int]) { self.statuses = statuses }

        func send(_ transfer: Transfer) async throws -> Response {
            let request = transfer.request
            let index = sent.withLock {
                $0.append(request)
                return $0.count - 1
            }
            return Response(statusCode: statuses[min(index, statuses.count - 1)], data: Data(), request: request)
        }
    }

    struct Renewing: Authenticator {
        func apply(_ credential: Int, to request: inout URLRequest) {
            request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        }
        func refresh(_ credential: Int) async throws -> Int { credential + 1 }
    }

    /// Records every context-taking hook as "hook attempt id".
    struct ContextRecorder: Plugin {
        let log = Locked<[(hook: String, attempt: Int, id: RequestID)]>([])
        let finished = Locked<[(RequestMetrics, RequestContext)]>([])

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
        func process(
            _ result: Result<Response, CourierError>, context: RequestContext
        ) async -> Result<Response, CourierError> {
            record("process", context)
            return result
        }
        func didFinish(_ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext) async
        {
            record("didFinish", context)
            finished.withLock { $0.append((metrics, context)) }
        }
        private func record(_ hook: String, _ context: RequestContext) {
            log.withLock { $0.append((hook, context.attempt, context.id)) }
        }
        var hooks: [String] { log.withLock { $0.map { "\($0.hook) \($0.attempt)" } } }
        var ids: Set<RequestID> { log.withLock { Set($0.map(\.id)) } }
    }

    // MARK: - Defect 1: a refresh is not a retry

    @Test func aRefreshWithoutARetryPolicyEndsWithTheStatusItself() async {
        let transport = Statuses([401, 500])
        let provider = Provider<Call>(transport: transport, authentication: Authentication(Renewing(), credential: 0))
        let error = await #expect(throws: CourierError.self) { try await provider.request(Call()) }
        guard case .statusCode(let response)? = error else {
            Issue.record("expected statusCode 500, got \(String(describing: error))")
            return
        }
        #expect(response.statusCode == 500)
        #expect(
            transport.sent.withLock { $0.map { $0.value(forHTTPHeaderField: "Authorization") } } == [
                "Bearer 0", "Bearer 1",
            ])
    }

    @Test func aRefreshThenRetriesCountsAttemptsAsThePolicyDoes() async {
        let transport = Statuses([401, 503])
        let recorder = ContextRecorder()
        let provider = Provider<Call>(
            transport: transport, plugins: [recorder],
            retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .zero, jitter: .none),
            authentication: Authentication(Renewing(), credential: 0))
        let error = await #expect(throws: CourierError.self) { try await provider.request(Call()) }
        guard case .retryLimitReached(attempts: 3, lastError: .statusCode(let last))? = error else {
            Issue.record("expected retryLimitReached(3, 503), got \(String(describing: error))")
            return
        }
        #expect(last.statusCode == 503)
        // Three attempts allowed by the policy, plus the re-send after the refresh.
        #expect(transport.sent.withLock { $0.count } == 4)
        #expect(
            recorder.hooks == [
                "prepare 0",
                "willSend 1", "didReceive 1",  // 401: refresh
                "willSend 1", "didReceive 1", "willRetry 1",
                "willSend 2", "didReceive 2", "willRetry 2",
                "willSend 3", "didReceive 3",
                "process 3", "didFinish 3",
            ])
        let metrics = recorder.finished.withLock { $0.first?.0 }
        #expect(metrics?.attempts.map(\.number) == [1, 1, 2, 3])
        #expect(metrics?.attempts.map(\.afterRefresh) == [false, true, true, true])
        #expect(metrics?.refreshes == 1)
        #expect(metrics?.waits.count == 2)
    }

    // MARK: - Defect 2: each caller of a shared request has its own deadline

    @Test func aCallerWithoutADeadlineOutlivesOneWhoseDeadlinePassed() async throws {
        let clock = TestClock()
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport, clock: clock, deduplication: .enabled)
        let hurried = Task { try await provider.request(Call(timeout: .seconds(1))) }
        let patient = Task { try await provider.request(Call(timeout: nil)) }
        await transport.waitForRequests(1)
        await provider.waitForInflightWaiters(2)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        let error = await #expect(throws: CourierError.self) { try await hurried.value }
        guard case .timedOut(.seconds(1))? = error else {
            Issue.record("expected timedOut(1 s), got \(String(describing: error))")
            return
        }
        // The hurried caller left before it returned; the other one still waits.
        #expect(await provider.inflightWaiterCount == 1)
        #expect(transport.cancellations == 0)
        transport.release(statusCode: 200, data: Data("late".utf8))
        let response = try await patient.value
        #expect(response.data == Data("late".utf8))
        #expect(response.metrics?.attempts.count == 1)
        #expect(transport.calls == 1)
    }

    @Test func theLastCallerWhoseDeadlinePassesCancelsTheSharedCall() async {
        let clock = TestClock()
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport, clock: clock, deduplication: .enabled)
        let first = Task { try await provider.request(Call(timeout: .seconds(1))) }
        let second = Task { try await provider.request(Call(timeout: .seconds(2))) }
        await transport.waitForRequests(1)
        await provider.waitForInflightWaiters(2)
        // One sleeper: the provider's timer sleeps until the earliest deadline only.
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        _ = await first.result
        #expect(transport.cancellations == 0)
        clock.advance(by: .seconds(1))
        _ = await second.result
        await transport.waitForCancellations(1)
        #expect(await provider.inflightCount == 0)
    }

    @Test func aJoiningCallerIsMarkedInItsMetrics() async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport, deduplication: .enabled)
        let first = Task { try await provider.request(Call()) }
        await transport.waitForRequests(1)
        let second = Task { try await provider.request(Call()) }
        await provider.waitForInflightWaiters(2)
        transport.release()
        let (a, b) = try await (first.value, second.value)
        #expect(a.metrics?.joinedSharedRequest == false)
        #expect(b.metrics?.joinedSharedRequest == true)
        #expect(a.metrics?.id != b.metrics?.id)
    }

    // MARK: - Defect 3: no policy spelled `.none`

    @Test func disabledMeansOneAttemptAndNilMeansTheProviders() async {
        let providerPolicy = RetryPolicy(maxAttempts: 2, baseDelay: .zero, jitter: .none)
        let disabled = Statuses([503])
        let provider = Provider<Call>(transport: disabled, retryPolicy: providerPolicy)
        _ = try? await provider.request(Call(retryPolicy: .disabled))
        #expect(disabled.sent.withLock { $0.count } == 1)

        let inherited = Statuses([503])
        let other = Provider<Call>(transport: inherited, retryPolicy: providerPolicy)
        _ = try? await other.request(Call(retryPolicy: nil))
        #expect(inherited.sent.withLock { $0.count } == 2)
        #expect(RetryPolicy.disabled.maxAttempts == 1)
    }

    // MARK: - Defect 4: refresh failures are authentication errors

    @Test func aRefreshThatThrowsAStatusErrorIsAnAuthenticationFailure() async {
        struct RefreshRefused: Authenticator {
            func apply(_ credential: Int, to request: inout URLRequest) {}
            func refresh(_ credential: Int) async throws -> Int {
                throw CourierError.statusCode(Response(statusCode: 400, data: Data("bad refresh token".utf8)))
            }
        }
        let provider = Provider<Call>(
            transport: Statuses([401]), authentication: Authentication(RefreshRefused(), credential: 0))
        let error = await #expect(throws: CourierError.self) { try await provider.request(Call()) }
        guard case .authentication(.refreshFailed(let cause))? = error,
            case .statusCode(let response) = cause as? CourierError
        else {
            Issue.record("expected authentication(refreshFailed(statusCode 400)), got \(String(describing: error))")
            return
        }
        #expect(response.statusCode == 400)
    }

    // MARK: - Request context

    @Test func everyHookOfACallSeesTheSameIDAndEveryCallADifferentOne() async throws {
        let recorder = ContextRecorder()
        let provider = Provider<Call>(stubClosure: Provider.immediatelyStub, plugins: [recorder])
        _ = try await provider.request(Call())
        let first = recorder.ids
        #expect(first.count == 1)
        #expect(recorder.hooks == ["prepare 0", "willSend 1", "didReceive 1", "process 1", "didFinish 1"])
        _ = try await provider.request(Call())
        #expect(recorder.ids.count == 2)
        #expect(recorder.finished.withLock { $0.map { $0.1.target is Call } } == [true, true])
    }

    @Test func theActivityPluginPairsByCallNotByTask() async throws {
        // Two calls whose hooks run on one task (the test's): still two begins and two ends.
        let activity = NetworkActivityPlugin()
        let ids = RequestIDSource()
        let first = RequestContext(id: ids.next(), target: Call())
        let second = RequestContext(id: ids.next(), target: Call())
        let request = URLRequest(url: URL(string: "https://api.example.com")!)
        await activity.willSend(request, context: first)
        await activity.willSend(request, context: second)
        #expect(await activity.activeCount == 2)
        await activity.didReceive(.failure(.cancelled), context: first)
        await activity.didReceive(.failure(.cancelled), context: first)
        #expect(await activity.activeCount == 1)
        await activity.didReceive(.failure(.cancelled), context: second)
        #expect(await activity.activeCount == 0)
    }

    @Test func idsAreUniqueAcrossProvidersAndCalls() async throws {
        let a = RequestIDSource()
        let b = RequestIDSource()
        let ids = (0..<1_000).flatMap { _ in [a.next(), b.next()] }
        #expect(Set(ids).count == 2_000)
        #expect(Set(ids.map(\.description)).count == 2_000)
    }

    // MARK: - Metrics on the provider's clock

    /// Moves the test clock in every hook, so the plugins' time is known exactly.
    struct ClockMovingPlugin: Plugin {
        let clock: TestClock
        var failsInPrepare = false

        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            clock.advance(by: .milliseconds(1))
            if failsInPrepare { throw URLError(.badURL) }
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

    /// The plugins' hooks are timed per hook, for all plugins together (two clock readings, not two
    /// per plugin): the sum is still every plugin's time, and nothing else's.
    @Test func pluginTimeIsEveryHookOfEveryPlugin() async throws {
        let clock = TestClock()
        let recorder = ContextRecorder()
        let movers = [ClockMovingPlugin(clock: clock), ClockMovingPlugin(clock: clock)]
        let provider = Provider<Call>(
            stubClosure: Provider.immediatelyStub, plugins: movers + [recorder], clock: clock)
        let response = try await provider.request(Call(id: 7))
        let metrics = try #require(response.metrics)
        #expect(metrics.mapping == .zero)
        #expect(metrics.plugins == .milliseconds(2 * (1 + 10 + 100 + 1_000)))
        #expect(metrics.total == .milliseconds(2 * (1 + 10 + 100 + 1_000)))
        let attempt = try #require(metrics.attempts.first)
        #expect(attempt.start == .milliseconds(2 * (1 + 10)))
        #expect(attempt.end == .milliseconds(2 * (1 + 10)))
        #expect(recorder.finished.withLock { $0.first?.0 } == metrics)
    }

    /// A `prepare` that throws: the time of the plugins that ran, the failing one's included.
    @Test func pluginTimeCountsAPrepareThatThrows() async throws {
        let clock = TestClock()
        let recorder = ContextRecorder()
        let plugins: [any Plugin] = [
            ClockMovingPlugin(clock: clock), ClockMovingPlugin(clock: clock, failsInPrepare: true), recorder,
        ]
        let provider = Provider<Call>(stubClosure: Provider.immediatelyStub, plugins: plugins, clock: clock)
        await #expect(throws: CourierError.self) { try await provider.request(Call(id: 7)) }
        let metrics = try #require(recorder.finished.withLock { $0.first?.0 })
        #expect(metrics.attempts.isEmpty)
        // prepare: 1 + 1 ms (the second throws); no `didReceive` (nothing was sent); process: 1 s each.
        #expect(metrics.plugins == .milliseconds(2 + 2 * 1_000))
        #expect(metrics.total == .milliseconds(2 + 2 * 1_000))
    }

    @Test func metricsAreExactOnATestClock() async throws {
        let clock = TestClock()
        let recorder = ContextRecorder()
        let provider = Provider<Call>(
            stubClosure: Provider.delayedStub(.seconds(2)), plugins: [recorder], clock: clock)
        let call = Task { try await provider.request(Call(id: 7)) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        let response = try await call.value
        let metrics = try #require(response.metrics)
        #expect(metrics.total == .seconds(2))
        #expect(metrics.mapping == .zero)
        #expect(metrics.plugins == .zero)
        #expect(metrics.attempts.count == 1)
        let attempt = try #require(metrics.attempts.first)
        #expect(attempt.number == 1)
        #expect(attempt.stubbed)
        #expect(!attempt.joinedSharedRequest)
        #expect(attempt.start == .zero)
        #expect(attempt.responseStart == .seconds(2))
        #expect(attempt.end == .seconds(2))
        #expect(attempt.statusCode == 200)
        #expect(attempt.transfer?.bytesReceived == Int64(Call(id: 7).sampleData.count))
        #expect(metrics.bytesReceived == Int64(Call(id: 7).sampleData.count))
        #expect(metrics.waits.isEmpty)
        #expect(metrics.refreshes == 0)
        // A sample response follows no redirects: a measured zero.
        #expect(attempt.transfer?.redirects == 0)
        #expect(metrics.redirects == 0)
        #expect(recorder.finished.withLock { $0.first?.0 } == metrics)
    }

    @Test func whatATransportDoesNotReportStaysUnknown() async throws {
        // A transport that reports no metrics: the sizes are read off the exchange, but the
        // redirects and the response start are unknown, not zero (they read 0 and nil before).
        let provider = Provider<Call>(transport: Statuses([200]))
        let response = try await provider.request(Call(id: 3))
        let metrics = try #require(response.metrics)
        let attempt = try #require(metrics.attempts.first)
        #expect(attempt.transfer != nil)
        #expect(attempt.transfer?.redirects == nil)
        #expect(attempt.responseStart == nil)
        #expect(metrics.redirects == nil)
    }

    @Test func retryWaitsAreMeasuredAndAFailedCallCarriesMetricsInItsResponse() async throws {
        let clock = TestClock()
        let provider = Provider<Call>(
            transport: Statuses([503]), clock: clock,
            retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: .seconds(3), jitter: .none))
        let call = Task { try await provider.request(Call()) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(3))
        let error = await #expect(throws: CourierError.self) { try await call.value }
        let metrics = try #require(error?.response?.metrics)
        #expect(metrics.waits == [.seconds(3)])
        #expect(metrics.attempts.map(\.number) == [1, 2])
        #expect(metrics.attempts.map(\.start) == [.zero, .seconds(3)])
        #expect(metrics.attempts.map(\.stubbed) == [false, false])
        #expect(metrics.total == .seconds(3))
    }

    @Test func metricsReachDidFinishWhenNothingWasSent() async throws {
        let recorder = ContextRecorder()
        let provider = Provider<Call>(
            endpointClosure: { _ in throw CourierError.requestMapping("no") }, plugins: [recorder])
        _ = try? await provider.request(Call())
        let (metrics, context) = try #require(recorder.finished.withLock { $0.first })
        #expect(metrics.attempts.isEmpty)
        #expect(context.attempt == 0)
        #expect(recorder.hooks == ["process 0", "didFinish 0"])
    }
}
