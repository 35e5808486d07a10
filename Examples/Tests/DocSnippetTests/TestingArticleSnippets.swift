// The samples of CourierTesting's DocC articles, with the names they leave to the reader filled in.
import Courier
import CourierTesting
import Foundation
import Testing
import TodoAPI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private struct User: Codable, Sendable { var login: String }
private struct Search: Codable, Sendable { var term: String }
private struct Event: Codable, Sendable { var kind: String }

private enum API: TargetType {
    case user, me, feed, export, search, events
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var headers: [String: String] { ["Accept": "application/json"] }
    var path: String {
        switch self {
        case .user: "users/ada"
        case .me: "me"
        case .feed: "feed"
        case .export: "export"
        case .search: "v2/search"
        case .events: "events"
        }
    }
    var method: HTTPMethod { self == .search || self == .events ? .post : .get }
    var task: HTTPTask {
        switch self {
        case .search:
            .compositeParameters(bodyParameters: ["term": "swift"], bodyEncoding: .json, urlParameters: ["page": 2])
        case .events: .json(Event(kind: "refresh"))
        default: .plain
        }
    }
}

@Test func matchingRequestsArticle() async throws {
    let transport = StubTransport()
    let user = User(login: "ada")
    let results = [User(login: "ada")]
    transport.on(.get, "users/*", .json(user))
    transport.on(
        .method(.post) && .path("v2/search") && .query(["page": "2"])
            && .header("Accept", "application/json") && .jsonBody(Search(term: "swift")),
        .json(results))
    let provider = Provider<API>(transport: transport)
    #expect(try await provider.request(.search).map([User].self).count == 1)
}

@Test func scriptedAnswersArticle() async throws {
    let transport = StubTransport()
    let user = User(login: "ada")
    let feed = [User(login: "ada")]
    transport.on(.get, "me", .sequence([.status(503), .status(503), .json(user)]))
    transport.on(.get, "me", .json(user))
    transport.on(.get, "me", .status(401).once())
    transport.on(.get, "feed", .scripted { hit in hit.isMultiple(of: 3) ? .status(429) : .json(feed) })
    let provider = Provider<API>(transport: transport)
    #expect(try await provider.request(.me).statusCode == 401)
    #expect(try await provider.request(.feed).statusCode == 200)
}

@Test func networkConditionsArticle() async throws {
    let report = Data(repeating: 1, count: 1_000)
    let clock = TestClock()
    let transport = StubTransport(clock: clock)
        .on(.get, "export", .data(report).throttled(bytesPerSecond: 1_000, chunkSize: 250))
    let provider = Provider<API>(transport: transport, clock: clock)
    let download = Task { try await provider.request(.export) }
    for _ in 0..<4 {
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(250))  // a chunk arrives
    }
    #expect(try await download.value.data == report)
}

@Test func verificationArticle() async throws {
    let transport = StubTransport()
    let user = User(login: "ada")
    let me = transport.route(.get, "me", .json(user))
    transport.on(.post, "events", .status(202))
    let provider = Provider<API>(transport: transport)
    _ = try await provider.request(.me)  // the article's `client.refresh()`
    _ = try await provider.request(.events)
    _ = try await provider.request(.events)
    transport.verify(me, times: 1)
    transport.verify(.post, "events", times: 2)
    transport.verify(.jsonBody(Event(kind: "refresh")), times: 2)
    transport.verifyOrder([.path("me"), .path("events")])
    transport.verifyAllRoutesUsed()
}

@Test func controllingTimeArticle() async throws {
    let clock = ImmediateClock()
    let provider = Provider<API>(stubClosure: Provider.delayedStub(.seconds(5)), clock: clock)
    _ = try await provider.request(.user)  // at once; clock.now is 5 s in
    #expect(clock.now.offset == .seconds(5))
}

// Compiled, not run: it records from the network when its fixture is missing.
func recordAndReplayArticle() {
    var redaction = FixtureRedaction.default
    redaction.headers.insert("x-tenant")
    redaction.jsonFields.insert("ssn")
    redaction.responseBody = { body, _ in
        Data(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "internal.example.com", with: "host").utf8)
    }
    _ = ReplayTransport("profile", redaction: redaction)
}
