import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct ProviderTests {
    @Test func requestGoesThroughTheTransport() async throws {
        let transport = RecordingTransport { request in
            Response(statusCode: 200, data: Data(#"{"id":9,"name":"nine"}"#.utf8), request: request)
        }
        let provider = Provider<TestAPI>(transport: transport)
        let item = try await provider.request(.item(id: 9)).map(Item.self)
        #expect(item == Item(id: 9, name: "nine"))
        #expect(transport.sent.map { $0.url?.absoluteString } == ["https://api.example.com/v1/items/9"])
    }

    @Test func bodiesAndQueriesReachTheTransport() async throws {
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(transport: transport)
        _ = try await provider.request(.search("swift concurrency"))
        _ = try await provider.request(.create(Item(id: 1, name: "x")))
        let sent = transport.sent
        #expect(sent[0].url?.absoluteString == "https://api.example.com/v1/search?q=swift%20concurrency")
        #expect(sent[1].httpMethod == "POST")
        #expect(try JSONDecoder().decode(Item.self, from: try #require(sent[1].httpBody)) == Item(id: 1, name: "x"))
    }

    @Test func structTargetsAndMultiTargetShareOneProvider() async throws {
        let transport = RecordingTransport()
        let provider = Provider<MultiTarget>(transport: transport)
        _ = try await provider.request(MultiTarget(UserResource(id: 4)))
        _ = try await provider.request(.target(TestAPI.create(Item(id: 1, name: "x"))))
        #expect(transport.sent.map(\.httpMethod) == ["GET", "POST"])
        #expect(transport.sent.first?.url?.absoluteString == "https://users.example.com/users/4")
    }

    @Test func asyncMappingsMayAwait() async throws {
        actor TokenStore {
            func token() async -> String { "t0ken" }
        }
        let store = TokenStore()
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                request.setValue("Bearer \(await store.token())", forHTTPHeaderField: "Authorization")
                return request
            },
            transport: transport
        )
        _ = try await provider.request(.plain)
        #expect(transport.sent.first?.value(forHTTPHeaderField: "Authorization") == "Bearer t0ken")
    }

    /// A provider given no mappings calls the default ones directly (issue 29); one given the
    /// same defaults as closures goes through them. Both send the same requests, a multipart
    /// form that reads a file included (built off the pool by the default request mapping), and
    /// refuse the same target with the same error; the public closures are the defaults.
    @Test func theDefaultMappingsAreTheSameCalledDirectlyOrAsClosures() async throws {
        struct Route: TargetType {
            var path: String
            var method: HTTPMethod = .get
            var task: HTTPTask = .plain
            var headers: [String: String] = ["X-Trace": "1"]
            var baseURL: URL { URL(string: "https://api.example.com/v1?key=k")! }
        }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("notes.txt", contents: Data("file body".utf8))
        let form = MultipartFormData(
            boundary: "b", parts: [.init(name: "t", data: Data("x".utf8)), .init(name: "doc", fileURL: file)])
        let targets = [
            Route(path: "items/1"), Route(path: "search?q=a b", task: .parameters(["p": 1], encoding: .queryString)),
            Route(path: "items", method: .post, task: .json(Item(id: 1, name: "x"))),
            Route(path: "upload", method: .post, task: .uploadMultipart(form)), Route(path: ""),
        ]
        let direct = RecordingTransport()
        let viaClosures = RecordingTransport()
        let implicit = Provider<Route>(transport: direct)
        let explicit = Provider<Route>(
            endpointClosure: Provider<Route>.defaultEndpointMapping(for:),
            requestClosure: Provider<Route>.defaultRequestMapping(for:), transport: viaClosures)
        for target in targets {
            _ = try await implicit.request(target)
            _ = try await explicit.request(target)
            let endpoint = try await implicit.endpointClosure(target)
            #expect(try await implicit.requestClosure(endpoint).url == direct.sent.last?.url)
        }
        func described(_ request: URLRequest) -> String {
            "\(request.httpMethod ?? "") \(request.url?.absoluteString ?? "") "
                + "\((request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }) \(request.httpBody ?? Data())"
        }
        #expect(direct.sent.count == targets.count)
        #expect(direct.sent.map(described) == viaClosures.sent.map(described))
        let refused = Route(path: "a/../b")
        await #expect(throws: CourierError.self) { try await implicit.request(refused) }
        await #expect(throws: CourierError.self) { try await explicit.request(refused) }
        #expect(direct.sent.count == targets.count)
    }

    @Test func transportErrorsAreWrappedAsUnderlying() async {
        let provider = Provider<TestAPI>(transport: RecordingTransport { _ in throw URLError(.networkConnectionLost) })
        await #expect {
            try await provider.request(.plain)
        } throws: { error in
            guard case CourierError.underlying(let underlying, nil) = error else { return false }
            return (underlying as? URLError)?.code == .networkConnectionLost
        }
    }

    @Test func deadlineTimesOutASlowTransportAndCancelsIt() async {
        let clock = TestClock()
        let transport = GatedTransport()
        let log = EventLog()
        let provider = Provider<TestAPI>(
            transport: transport, plugins: [RecordingPlugin("A", log: log)], clock: clock, timeout: .seconds(2))
        let request = Task { try await provider.request(.plain) }
        await transport.waitForRequests(1)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        let result = await request.result
        let error = result.failure as? CourierError
        guard case .timedOut(let duration) = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        #expect(duration == .seconds(2))
        #expect(error?.isTimeout == true)
        #expect(transport.cancellations == 1)
        #expect(log.all.contains("A.didReceive(timedOut)"))
    }

    @Test func targetTimeoutOverridesTheProviders() async {
        struct Slow: TargetType {
            var headers: [String: String] { [:] }
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "slow" }
            var timeout: Duration? { .milliseconds(500) }
        }
        let clock = TestClock()
        let transport = GatedTransport()
        let provider = Provider<Slow>(transport: transport, clock: clock, timeout: .seconds(30))
        let request = Task { try await provider.request(Slow()) }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(500))
        guard case .timedOut(let duration) = (await request.result).failure as? CourierError else {
            Issue.record("expected timedOut")
            return
        }
        #expect(duration == .milliseconds(500))
    }

    @Test func deadlineDoesNotFireWhenTheResponseArrivesFirst() async throws {
        let clock = TestClock()
        let transport = GatedTransport()
        let provider = Provider<TestAPI>(transport: transport, clock: clock, timeout: .seconds(2))
        let request = Task { try await provider.request(.plain) }
        await transport.waitForRequests(1)
        transport.release(statusCode: 204)
        #expect(try await request.value.statusCode == 204)
        // The provider's one timer still sleeps until the deadline would have passed; waking then,
        // it finds nothing to fire.
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(3))
        await clock.waitForSleepers(0)
    }

    @Test func deadlineAppliesToDelayedStubs() async {
        let clock = TestClock()
        let provider = Provider<TestAPI>(
            stubClosure: Provider.delayedStub(.seconds(10)), clock: clock, timeout: .seconds(1))
        let request = Task { try await provider.request(.plain) }
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(1))
        #expect(((await request.result).failure as? CourierError)?.isTimeout == true)
    }

    /// The provider holds no work: 64 requests are all inside the transport at the same time.
    @Test func concurrentRequestsRunConcurrently() async throws {
        let transport = GatedTransport()
        let provider = Provider<TestAPI>(transport: transport)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for id in 0..<64 {
                group.addTask { try await provider.request(.item(id: id)).statusCode }
            }
            await transport.waitForRequests(64)
            #expect(transport.calls == 64)
            transport.release(statusCode: 200)
            var answered = 0
            for try await code in group {
                #expect(code == 200)
                answered += 1
            }
            #expect(answered == 64)
        }
    }

    @Test func cancellationDuringTransportThrowsCancelled() async {
        let transport = GatedTransport()
        let provider = Provider<TestAPI>(transport: transport)
        let request = Task { try await provider.request(.plain) }
        await transport.waitForRequests(1)
        request.cancel()
        let error = (await request.result).failure as? CourierError
        #expect(error?.isCancellation == true)
        #expect(transport.cancellations == 1)
    }
}
