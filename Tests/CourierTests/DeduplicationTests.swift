import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct DeduplicationTests {
    /// A target whose method, body and per-target policy the test chooses.
    struct Call: TargetType {
        var headers: [String: String] { [:] }
        var id = 1
        var method: HTTPMethod = .get
        var body: Data? = nil
        var deduplication: Deduplication? = nil
        var validation: ValidationType = .none
        var limits: Limits? = nil
        var stubbed = false
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var sampleData: Data { Data("sample".utf8) }
        var path: String { "items/\(id)" }
        var task: HTTPTask { body.map { .data($0) } ?? .plain }
    }

    private func waiters<T>(_ provider: Provider<T>, _ count: Int) async -> Bool {
        await provider.waitForInflightWaiters(count)
        return await provider.inflightWaiterCount == count
    }

    /// Calls 1, 2 and 1 at once: the two 1s share one exchange, 2 has its own.
    private func expectTwoExchanges(_ provider: Provider<Call>, _ transport: GatedTransport) async throws {
        let tasks = [1, 2, 1].map { id in Task { try await provider.request(Call(id: id)) } }
        #expect(await waiters(provider, 3))
        #expect(await provider.inflightCount == 2)
        transport.release()
        for task in tasks { _ = try await task.value }
        #expect(transport.calls == 2)
    }

    @Test func concurrentIdenticalRequestsMakeOneCall() async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport, deduplication: .enabled)
        let tasks = (0..<50).map { _ in Task { try await provider.request(Call()) } }
        #expect(await waiters(provider, 50))
        #expect(await provider.inflightCount == 1)
        transport.release(statusCode: 200, data: Data("shared".utf8))
        for task in tasks {
            let response = try await task.value
            #expect(response.data == Data("shared".utf8))
        }
        #expect(transport.calls == 1)
        #expect(await provider.inflightCount == 0)
    }

    @Test func differentBodiesAreNotMerged() async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport, deduplication: .allMethods)
        let a = Task { try await provider.request(Call(method: .post, body: Data("a".utf8))) }
        let b = Task { try await provider.request(Call(method: .post, body: Data("b".utf8))) }
        let a2 = Task { try await provider.request(Call(method: .post, body: Data("a".utf8))) }
        await transport.waitForRequests(2)
        #expect(await waiters(provider, 3))
        #expect(await provider.inflightCount == 2)
        transport.release()
        _ = try await (a.value, b.value, a2.value)
        #expect(transport.calls == 2)
    }

    @Test func differentHeadersOrURLsAreNotMerged() async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                request.setValue(endpoint.url.lastPathComponent, forHTTPHeaderField: "X-Id")
                return request
            },
            transport: transport, deduplication: .enabled)
        try await expectTwoExchanges(provider, transport)
    }

    /// Settings of the request a transport obeys (cellular access, its timeout, cookies, the
    /// Foundation cache policy) keep callers apart (found by review).
    @Test(arguments: ["cellular", "timeout", "cookies", "cachePolicy", "serviceType"])
    func requestsWithOtherSettingsAreNotMerged(setting: String) async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                guard endpoint.url.lastPathComponent == "2" else { return request }
                switch setting {
                case "cellular": request.allowsCellularAccess = false
                case "timeout": request.timeoutInterval = 5
                case "cookies": request.httpShouldHandleCookies = false
                case "cachePolicy": request.cachePolicy = .reloadIgnoringLocalCacheData
                default: request.networkServiceType = .background
                }
                // The same URL as the others: only the setting differs.
                request.url = URL(string: "https://api.example.com/items/1")
                return request
            },
            transport: transport, deduplication: .enabled)
        try await expectTwoExchanges(provider, transport)
    }

    /// Each call's own trace context (a tracing plugin's `traceparent`) does not keep identical
    /// requests apart (found by review: with tracing on, nothing was ever merged).
    @Test func traceContextDoesNotKeepCallsApart() async throws {
        let transport = GatedTransport()
        let ids = Locked(0)
        let provider = Provider<Call>(
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                let id = ids.withLock {
                    $0 += 1
                    return $0
                }
                request.setValue("00-\(id)-01", forHTTPHeaderField: "traceparent")
                request.setValue("k=\(id)", forHTTPHeaderField: "Baggage")
                return request
            },
            transport: transport, deduplication: .enabled)
        let tasks = (0..<3).map { _ in Task { try await provider.request(Call()) } }
        #expect(await waiters(provider, 3))
        #expect(await provider.inflightCount == 1)
        transport.release()
        for task in tasks { _ = try await task.value }
        #expect(transport.calls == 1)
    }

    /// A timeout a mapping set to NaN still makes a key equal to itself: the callers are answered
    /// and the table emptied (found by review: a key unequal to itself was never found again).
    @Test func aNaNTimeoutStillMatchesItself() async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                request.timeoutInterval = .nan
                return request
            },
            transport: transport, deduplication: .enabled)
        let tasks = (0..<2).map { _ in Task { try await provider.request(Call()) } }
        #expect(await waiters(provider, 2))
        #expect(await provider.inflightCount == 1)
        transport.release()
        for task in tasks { _ = try await task.value }
        #expect(await provider.inflightCount == 0)
        #expect(transport.calls == 1)
    }

    /// Thousands of waiters leaving one by one (cancelled or past their deadlines) each take
    /// their own entry out of the shared exchange's table; the last one cancels the exchange.
    @Test func manyWaitersLeaveOneByOne() async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport, deduplication: .enabled)
        let tasks = (0..<2_000).map { _ in Task { try await provider.request(Call()) } }
        #expect(await waiters(provider, 2_000))
        for (index, task) in tasks.enumerated() {
            task.cancel()
            guard case .cancelled = (await task.result).failure as? CourierError else {
                Issue.record("expected cancelled")
                return
            }
            #expect(await provider.inflightWaiterCount == 2_000 - index - 1)
        }
        #expect(await provider.inflightCount == 0)
        await transport.waitForCancellations(1)
    }

    struct FileUpload: TargetType {
        let file: URL
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "avatar" }
        var method: HTTPMethod { .put }
        var task: HTTPTask { .uploadFile(file) }
        var headers: [String: String] { [:] }
        var validation: ValidationType { .none }
    }

    /// A caller whose file was rewritten while an upload of the same path was in flight sends
    /// its own bytes; one whose file is as it was joins (found by review).
    @Test func aFileRewrittenSinceTheSharedUploadBeganIsSentAgain() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("avatar.jpg")
        try Data("first".utf8).write(to: file)
        let transport = GatedTransport()
        let provider = Provider<FileUpload>(transport: transport, deduplication: .allMethods)
        let first = Task { try await provider.request(FileUpload(file: file)) }
        await transport.waitForRequests(1)
        let same = Task { try await provider.request(FileUpload(file: file)) }
        #expect(await waiters(provider, 2))
        #expect(await provider.inflightCount == 1)
        try Data("second, longer".utf8).write(to: file)
        let rewritten = Task { try await provider.request(FileUpload(file: file)) }
        #expect(await waiters(provider, 3))
        #expect(await provider.inflightCount == 2)
        await transport.waitForRequests(2)
        transport.release()
        _ = try await (first.value, same.value, rewritten.value)
        #expect(transport.calls == 2)
    }

    @Test func defaultPolicyMergesOnlyReads() async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport, deduplication: .enabled)
        let posts = (0..<3).map { _ in Task { try await provider.request(Call(method: .post)) } }
        let heads = (0..<3).map { _ in Task { try await provider.request(Call(method: .head)) } }
        await transport.waitForRequests(4)
        #expect(await waiters(provider, 3))
        transport.release()
        for task in posts + heads { _ = try await task.value }
        #expect(transport.calls == 4)
    }

    @Test func disabledByDefault() async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport)
        let tasks = (0..<3).map { _ in Task { try await provider.request(Call()) } }
        await transport.waitForRequests(3)
        #expect(await provider.inflightCount == 0)
        transport.release()
        for task in tasks { _ = try await task.value }
        #expect(transport.calls == 3)
    }

    @Test func targetOverridesTheProvider() async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport, deduplication: .disabled)
        let merged = (0..<3).map { _ in Task { try await provider.request(Call(deduplication: .enabled)) } }
        let separate = (0..<2).map { _ in Task { try await provider.request(Call(id: 2, deduplication: .disabled)) } }
        await transport.waitForRequests(3)
        #expect(await waiters(provider, 3))
        transport.release()
        for task in merged + separate { _ = try await task.value }
        #expect(transport.calls == 3)

        let optOut = Provider<Call>(transport: RecordingTransport(), deduplication: .allMethods)
        _ = try await optOut.request(Call(deduplication: .methods([.put])))
        #expect(await optOut.inflightCount == 0)
    }

    @Test func oneWaiterCancelsAloneAndAtOnce() async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport, deduplication: .enabled)
        let leaving = Task { try await provider.request(Call()) }
        let staying = (0..<3).map { _ in Task { try await provider.request(Call()) } }
        #expect(await waiters(provider, 4))
        leaving.cancel()
        // Answered before the shared call finishes.
        #expect(((await leaving.result).failure as? CourierError)?.isCancellation == true)
        #expect(await provider.inflightWaiterCount == 3)
        #expect(transport.cancellations == 0)
        transport.release(statusCode: 200)
        for task in staying {
            #expect(try await task.value.statusCode == 200)
        }
        #expect(transport.calls == 1)
    }

    @Test func lastWaiterLeavingCancelsTheCall() async {
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport, deduplication: .enabled)
        let tasks = (0..<5).map { _ in Task { try await provider.request(Call()) } }
        await transport.waitForRequests(1)
        #expect(await waiters(provider, 5))
        for task in tasks.shuffled() { task.cancel() }
        for task in tasks {
            #expect(((await task.result).failure as? CourierError)?.isCancellation == true)
        }
        await transport.waitForCancellations(1)
        #expect(await provider.inflightCount == 0)
    }

    @Test func requestAfterCompletionStartsANewCall() async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport, deduplication: .enabled)
        #expect(await provider.inflightCount == 0)
        let first = Task { try await provider.request(Call()) }
        await transport.waitForRequests(1)
        #expect(await provider.inflightCount == 1)
        transport.release(data: Data("one".utf8))
        #expect(try await first.value.data == Data("one".utf8))
        #expect(await provider.inflightCount == 0)

        let second = Task { try await provider.request(Call()) }
        await transport.waitForRequests(1)
        transport.release(data: Data("two".utf8))
        #expect(try await second.value.data == Data("two".utf8))
        #expect(transport.calls == 2)
    }

    @Test func allWaitersGetTheSameError() async {
        let provider = Provider<Call>(
            transport: RecordingTransport { _ in throw URLError(.networkConnectionLost) }, deduplication: .enabled)
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    do throws(CourierError) {
                        _ = try await provider.request(Call())
                        return false
                    } catch {
                        return (error.underlyingError as? URLError)?.code == .networkConnectionLost
                    }
                }
            }
            for await matched in group { #expect(matched) }
        }
    }

    /// A caller whose target holds the exchange to other limits (here a smaller body) gets an
    /// exchange of its own: joining another's, it would receive an answer its limits refuse.
    @Test func callersWithOtherLimitsAreNotMerged() async throws {
        let transport = GatedTransport()
        let provider = Provider<Call>(transport: transport, deduplication: .enabled)
        let lenient = (0..<2).map { _ in Task { try await provider.request(Call()) } }
        let strict = Task { try await provider.request(Call(limits: Limits(maxResponseBytes: 4))) }
        #expect(await waiters(provider, 3))
        // Read once, so a merge of all three fails here and below rather than waiting for a
        // second request that never comes.
        let exchanges = await provider.inflightCount
        #expect(exchanges == 2)
        await transport.waitForRequests(exchanges)
        transport.release(statusCode: 200, data: Data("longer than four bytes".utf8))
        for task in lenient { #expect(try await task.value.data.count == 22) }
        let refused = (await strict.result).failure as? CourierError
        guard case .limitExceeded(.responseBody(limit: 4)) = refused else {
            Issue.record("expected the strict caller's own limit, got \(String(describing: refused))")
            return
        }
        #expect(transport.calls == exchanges)
    }

    /// A stubbed caller and one that is not, with the same request, never share an exchange: the
    /// one sent over the transport never receives a sample, and the stubbed one never reaches the
    /// network.
    @Test func stubbedAndSentCallersAreNotMerged() async throws {
        let transport = GatedTransport()
        let clock = TestClock()
        let provider = Provider<Call>(
            stubClosure: { $0.stubbed ? .delayed(.seconds(1)) : .never }, transport: transport, clock: clock,
            deduplication: .enabled)
        let sent = Task { try await provider.request(Call()) }
        let stubbed = Task { try await provider.request(Call(stubbed: true)) }
        #expect(await waiters(provider, 2))
        // Read once: with the two merged, the checks below fail instead of waiting.
        let exchanges = await provider.inflightCount
        #expect(exchanges == 2)
        if exchanges == 2 {
            await transport.waitForRequests(1)
            await clock.waitForSleepers(1)
        }
        transport.release(statusCode: 200, data: Data("network".utf8))
        clock.advance(by: .seconds(1))
        #expect(try await sent.value.data == Data("network".utf8))
        #expect(try await stubbed.value.data == Data("sample".utf8))
        #expect(transport.calls == 1)
    }

    /// Hooks run per caller (each caller's request passes every hook once); the transport runs once.
    @Test func pluginsRunPerCallerAndValidationPerTarget() async throws {
        let transport = GatedTransport()
        let log = EventLog()
        let provider = Provider<Call>(
            transport: transport, plugins: [RecordingPlugin("A", log: log)], deduplication: .enabled)
        let lenient = (0..<2).map { _ in Task { try await provider.request(Call()) } }
        let strict = Task { try await provider.request(Call(validation: .customCodes([200]))) }
        #expect(await waiters(provider, 3))
        transport.release(statusCode: 202)
        for task in lenient { #expect(try await task.value.statusCode == 202) }
        #expect(((await strict.result).failure as? CourierError)?.response?.statusCode == 202)
        #expect(transport.calls == 1)
        let events = log.all
        #expect(events.filter { $0 == "A.willSend" }.count == 3)
        #expect(events.filter { $0 == "A.didReceive(202)" }.count == 2)
        #expect(events.filter { $0 == "A.didReceive(statusCode 202)" }.count == 1)
        #expect(events.filter { $0.hasPrefix("A.process") }.count == 3)
    }

    @Test func stubbedRequestsAreMergedToo() async throws {
        let clock = TestClock()
        let provider = Provider<Call>(
            stubClosure: { _ in .delayed(.seconds(1)) }, clock: clock, deduplication: .enabled)
        let tasks = (0..<10).map { _ in Task { try await provider.request(Call()) } }
        #expect(await waiters(provider, 10))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        for task in tasks { #expect(try await task.value.statusCode == 200) }
    }
}
