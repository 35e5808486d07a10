import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct StubTransportTests {
    enum API: TargetType {
        var headers: [String: String] { [:] }
        case users, user(Int), create(Item), file(Int), deep(String)
        var baseURL: URL { URL(string: "https://api.example.com/v2")! }
        var path: String {
            switch self {
            case .users, .create: "users"
            case .user(let id): "users/\(id)"
            case .file(let id): "files/\(id)/content"
            case .deep(let rest): "assets/\(rest)"
            }
        }
        var method: HTTPMethod {
            if case .create = self { return .post }
            return .get
        }
        var task: HTTPTask {
            if case .create(let item) = self { return .json(item) }
            return .plain
        }
    }

    @Test func routesByMethodAndPathWithWildcards() async throws {
        let transport = StubTransport()
            .on(.get, "v2/users", .json([Item(id: 1, name: "a")]))
            .on(.get, "v2/users/*", .json(Item(id: 2, name: "b")))
            .on(.post, "v2/users", .status(201))
            .on(nil, "v2/assets/**", .data(Data("asset".utf8), headers: ["ETag": "1"]))
        let provider = Provider<API>(transport: transport)
        #expect(try await provider.request(.users).map([Item].self) == [Item(id: 1, name: "a")])
        #expect(try await provider.request(.user(9)).map(Item.self) == Item(id: 2, name: "b"))
        #expect(try await provider.request(.create(Item(id: 3, name: "c"))).statusCode == 201)
        let asset = try await provider.request(.deep("img/logo.png"))
        #expect(asset.data == Data("asset".utf8))
        #expect(asset.value(forHTTPHeaderField: "etag") == "1")
        #expect(try await provider.request(.users).value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    /// How a route can give a body: data, chunks, events, and with network conditions.
    static let bodies: [(String, @Sendable (Int) -> StubAnswer)] = [
        ("data", { .data(Data("a body the wire would not carry".utf8), status: $0, headers: ["ETag": "\"1\""]) }),
        (
            "chunks",
            { .stream([Data("a body ".utf8), Data("in chunks".utf8)], status: $0, headers: ["ETag": "\"1\""]) }
        ),
        ("events", { _ in .events([ServerSentEvent(data: "an event")]) }),
        (
            "dropped",
            { .data(Data(count: 1_000), status: $0, headers: ["ETag": "\"1\""]).droppingConnection(afterBytes: 10) }
        ),
        ("stalled", { .data(Data(count: 1_000), status: $0, headers: ["ETag": "\"1\""]).stalling(afterBytes: 10) }),
        (
            "throttled",
            { .data(Data(count: 1_000), status: $0, headers: ["ETag": "\"1\""]).throttled(bytesPerSecond: 100) }
        ),
    ]

    /// Each way with a HEAD, and with a 204 and a 304 to a GET (events always answer 200).
    static let bodilessCases: [(method: String, status: Int, body: Int)] = [("HEAD", 200), ("GET", 204), ("GET", 304)]
        .flatMap { method, status in
            bodies.indices.filter { method == "HEAD" || bodies[$0].0 != "events" }.map { (method, status, $0) }
        }

    /// A route's body never reaches a HEAD, a 1xx, a 204 or a 304, as on a real transport: the
    /// answer is whole and empty once its head is in (a body that would be cut or stall does not
    /// apply), its headers kept, in memory, streamed and with progress. A stalled or throttled
    /// body would wait on a clock nobody moves, so the test would hang if any of it went out.
    @Test(arguments: bodilessCases)
    func answersWithoutABodyOnTheWireHaveNone(method: String, status: Int, body: Int) async throws {
        let (name, answer) = Self.bodies[body]
        let transport = StubTransport(clock: TestClock()).on(nil, "**", answer(status))
        let provider = Provider<Fault>(transport: transport)
        let target = Fault(path: "bodiless", method: HTTPMethod(rawValue: method), timeout: nil)
        let response = try await provider.request(target)
        #expect(response.statusCode == status, "\(name)")
        #expect(response.data.isEmpty, "\(name)")
        if name != "events" { #expect(response.value(forHTTPHeaderField: "ETag") == "\"1\"", "\(name)") }
        var progress: [ProgressEvent] = []
        for try await event in provider.requestWithProgress(target) { progress.append(event) }
        #expect(progress.last?.response?.data.isEmpty == true, "\(name)")
        #expect(progress.allSatisfy { ($0.download?.completed ?? 0) == 0 }, "\(name)")
        var chunks = 0
        for try await _ in try await provider.stream(target).chunks { chunks += 1 }
        #expect(chunks == 0, "\(name)")
    }

    /// A provider's own sample response is the target's to give, whatever the method, as in Moya
    /// (a migrated test keeps its `sampleData`): only `StubTransport` plays the wire.
    @Test func aSampleResponseAnswersAHeadWithItsData() async throws {
        struct Head: TargetType {
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "x" }
            var method: HTTPMethod { .head }
            var headers: [String: String] { [:] }
            var sampleData: Data { Data("sample".utf8) }
        }
        let provider = Provider<Head>(stubClosure: Provider.immediatelyStub)
        #expect(try await provider.request(Head()).data == Data("sample".utf8))
    }

    /// The same routes answer a GET with a 200 with their body.
    @Test func theSameRoutesGiveAGetTheirBody() async throws {
        let transport = StubTransport()
            .on(.head, "bodiless", .data(Data("body".utf8)))
            .on(.get, "bodiless", .data(Data("body".utf8)))
        let provider = Provider<Fault>(transport: transport)
        #expect(try await provider.request(Fault(path: "bodiless", timeout: nil)).data == Data("body".utf8))
        #expect(try await provider.request(Fault(path: "bodiless", method: .head, timeout: nil)).data.isEmpty)
    }

    @Test func lastMatchingRouteWins() async throws {
        let transport = StubTransport().on(nil, "**", .status(500)).on(.get, "v2/users", .status(200))
        let provider = Provider<API>(transport: transport)
        #expect(try await provider.request(.users).statusCode == 200)
        #expect(try await provider.request(.user(1)).statusCode == 500)
    }

    @Test func predicateRoutesErrorsAndHandlers() async throws {
        let transport = StubTransport()
            .on({ $0.url?.path.hasSuffix("/content") == true }, .error(URLError(.notConnectedToInternet)))
            .on(
                { $0.httpMethod == "POST" },
                .handler { request in
                    Response(statusCode: 200, data: request.httpBody ?? Data(), request: request)
                })
        let provider = Provider<API>(transport: transport)
        let echoed = try await provider.request(.create(Item(id: 5, name: "e"))).map(Item.self)
        #expect(echoed == Item(id: 5, name: "e"))
        await #expect {
            try await provider.request(.file(1))
        } throws: { error in
            ((error as? CourierError)?.underlyingError as? URLError)?.code == .notConnectedToInternet
        }
    }

    @Test func everyRequestIsRecordedWithItsTarget() async throws {
        let transport = StubTransport().on(nil, "**", .status(204))
        let provider = Provider<MultiTarget>(transport: transport)
        _ = try await provider.request(MultiTarget(API.create(Item(id: 1, name: "x"))))
        _ = try await provider.request(MultiTarget(API.user(4)))
        let recorded = transport.requests
        #expect(recorded.map { $0.request.url?.path } == ["/v2/users", "/v2/users/4"])
        #expect(
            recorded.first?.body.flatMap { try? JSONDecoder().decode(Item.self, from: $0) } == Item(id: 1, name: "x"))
        #expect(
            recorded.map { $0.target.map { "\($0)" } } == ["create(CourierTests.Item(id: 1, name: \"x\"))", "user(4)"])
    }

    @Test func unstubbedRequestFailsNamingTargetMethodAndURL() async {
        let provider = Provider<API>(transport: StubTransport(unmatched: .throwError))
        await #expect {
            try await provider.request(.user(42))
        } throws: { error in
            let text = "\((error as? CourierError)?.underlyingError ?? error)"
            // The target by type and case: its associated values may hold secrets.
            return text.contains("(target: API.user)") && !text.contains("user(42)") && text.contains("GET")
                && text.contains("https://api.example.com/v2/users/42")
        }
    }

    @Test func delayedAnswersWaitOnTheClock() async throws {
        let clock = TestClock()
        let transport = StubTransport(clock: clock).on(.get, "v2/users", .status(200).delayed(by: .seconds(3)))
        let provider = Provider<API>(transport: transport)
        let request = Task { try await provider.request(.users) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(3))
        #expect(try await request.value.statusCode == 200)
    }

    @Test func downloadsAndProgressWork() async throws {
        struct Download: TargetType {
            var headers: [String: String] { [:] }
            let folder: URL
            var baseURL: URL { URL(string: "https://files.example.com")! }
            var path: String { "report.csv" }
            var task: HTTPTask { .download(.folder(folder) { _, _ in "report.csv" }) }
        }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let transport = StubTransport().on(.get, "report.csv", .data(Data("a,b\n1,2\n".utf8)))
        let provider = Provider<Download>(transport: transport)
        var last: ProgressEvent?
        for try await event in provider.requestWithProgress(Download(folder: folder.url)) { last = event }
        let saved = try #require(last?.response?.fileURL)
        #expect(try String(contentsOf: saved, encoding: .utf8) == "a,b\n1,2\n")
        #expect(last?.download?.completed == 8)
    }

    @Test func resetClearsRoutesAndRecords() async throws {
        let transport = StubTransport(unmatched: .throwError).on(nil, "**", .status(200))
        let provider = Provider<API>(transport: transport)
        _ = try await provider.request(.users)
        transport.reset()
        #expect(transport.requests.isEmpty)
        await #expect(throws: CourierError.self) { try await provider.request(.users) }
    }
}
