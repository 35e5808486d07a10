import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ReplayTransport: record through a transport, replay without it. The "network" here is a
/// StubTransport (in process); `ReplayIntegrationTests` records from the local httpbin.
@Suite(.timeLimit(.minutes(2))) struct ReplayTransportTests {
    struct Item: Codable, Sendable, Equatable {
        var id: Int
        var name: String
    }

    enum API: TargetType {
        case binary, item(Int, query: [String: String] = [:]), create(Item), events, export(URL), me(token: String)
        case search(String)
        var baseURL: URL { URL(string: "https://api.example.com/v1")! }
        var headers: [String: String] {
            if case .me(let token) = self { return ["Authorization": "Bearer \(token)", "Cookie": "sid=\(token)"] }
            return [:]
        }
        var path: String {
            switch self {
            case .binary: "binary"
            case .item(let id, _): "items/\(id)"
            case .create: "items"
            case .events: "events"
            case .export: "export"
            case .me: "me"
            case .search: "search"
            }
        }
        var method: HTTPMethod {
            if case .create = self { return .post }
            return .get
        }
        var task: HTTPTask {
            switch self {
            case .item(_, let query) where !query.isEmpty:
                .parameters(query.mapValues { $0 as any ParameterConvertible }, encoding: .queryString)
            case .create(let item): .json(item)
            case .export(let folder): .download(.folder(folder) { _, _ in "export.bin" })
            case .me(let token): .parameters(["api_key": "\(token)", "view": "full"], encoding: .queryString)
            case .search(let term): .parameters(["q": "\(term)"], encoding: .queryString)
            default: .plain
            }
        }
    }

    // Computed, not stored: LeakSanitizer reports a `Data` kept in a lazily initialized static as
    // leaked with this toolchain.
    static var binary: Data { Data((0..<1_024).map { UInt8(truncatingIfNeeded: $0 &* 7) }) }

    /// The "server": answers each route of `API`.
    static func network() -> StubTransport {
        StubTransport(unmatched: .throwError)
            .on(.get, "v1/binary", .data(binary, headers: ["Content-Type": "application/octet-stream", "Date": "now"]))
            .on(.get, "v1/items/*", .json(Item(id: 1, name: "one")))
            .on(
                .post, "v1/items",
                .handler { request in
                    Response(statusCode: 201, data: request.httpBody ?? Data(), request: request)
                }
            )
            .on(.get, "v1/events", .stream([Data("data: a\n\n".utf8), Data("data: b\n".utf8), Data("\n".utf8)]))
            .on(.get, "v1/export", .data(binary))
            .on(
                .get, "v1/me",
                .data(
                    Data(#"{"access_token":"s3cr3t-token","login":"ada"}"#.utf8),
                    headers: ["Set-Cookie": "sid=s3cr3t-cookie", "Content-Type": "application/json"]))
    }

    /// A transport that must never be used.
    static func unreachable() -> StubTransport { StubTransport(unmatched: .throwError) }

    @Test func recordedExchangesReplayByteForByteWithoutTheNetwork() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("round-trip.har")
        let network = Self.network()

        let recorder = Provider<API>(transport: ReplayTransport(fixture: fixture, mode: .record, upstream: network))
        let recorded = try await exercise(recorder, folder: folder)
        #expect(network.requests.count == 5)

        let offline = Self.unreachable()
        let player = Provider<API>(transport: ReplayTransport(fixture: fixture, mode: .replay, upstream: offline))
        let replayed = try await exercise(player, folder: folder)
        #expect(offline.requests.isEmpty)

        #expect(replayed.binary == Self.binary)
        #expect(replayed.binary == recorded.binary)
        #expect(replayed.item == Item(id: 1, name: "one"))
        #expect(replayed.created == Item(id: 9, name: "new"))
        #expect(replayed.chunks == ["data: a\n\n", "data: b\n", "\n"].map { Data($0.utf8) })
        #expect(replayed.chunks == recorded.chunks)
        #expect(replayed.download == Self.binary)
        #expect(replayed.contentType == "application/octet-stream")
    }

    struct Outcome {
        var binary: Data
        var item: Item
        var created: Item
        var chunks: [Data]
        var download: Data
        var contentType: String?
    }

    private func exercise(_ provider: Provider<API>, folder: TemporaryFolder) async throws -> Outcome {
        let binary = try await provider.request(.binary)
        let item = try await provider.request(.item(1)).map(Item.self)
        let created = try await provider.request(.create(Item(id: 9, name: "new"))).map(Item.self)
        var chunks: [Data] = []
        for try await chunk in try await provider.stream(.events).chunks { chunks.append(chunk) }
        let downloads = folder.url.appendingPathComponent("downloads-\(UUID().uuidString)")
        let saved = try #require(try await provider.request(.export(downloads)).fileURL)
        return Outcome(
            binary: binary.data, item: item, created: created, chunks: chunks, download: try Data(contentsOf: saved),
            contentType: binary.value(forHTTPHeaderField: "Content-Type"))
    }

    @Test func fixturesAreReadableStableHARWithoutSecrets() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var files: [Data] = []
        for run in 0..<2 {
            let fixture = folder.url.appendingPathComponent("run\(run).har")
            let provider = Provider<API>(
                transport: ReplayTransport(fixture: fixture, mode: .record, upstream: Self.network()))
            // Concurrent requests, in a different order each run: the file is the same.
            try await withThrowingTaskGroup(of: Void.self) { group in
                let calls: [API] = [.binary, .item(2), .me(token: "s3cr3t-\(run)"), .create(Item(id: 3, name: "c"))]
                for call in run == 0 ? calls : calls.reversed() {
                    group.addTask { _ = try await provider.request(call) }
                }
                try await group.waitForAll()
            }
            files.append(try Data(contentsOf: fixture))
        }
        let text = String(decoding: files[0], as: UTF8.self)
        // The token differs between the runs, but it is redacted, so the files are equal.
        #expect(files[0] == files[1])
        for secret in ["s3cr3t"] { #expect(!text.contains(secret), "the fixture holds \(secret)") }
        #expect(text.contains(#""name" : "Authorization""#))
        #expect(text.contains("api_key=REDACTED"))
        #expect(!text.contains(#""name" : "Date""#))

        let har = try JSONSerialization.jsonObject(with: files[0]) as? [String: Any]
        let log = try #require(har?["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        #expect((log["entries"] as? [Any])?.count == 4)
    }

    @Test func requestsMatchWithQueryInAnyOrderAndJSONBodiesByMeaning() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("matching.har")
        let recorder = Provider<API>(
            transport: ReplayTransport(fixture: fixture, mode: .record, upstream: Self.network()))
        _ = try await recorder.request(.item(5, query: ["a": "1", "b": "2"]))
        _ = try await recorder.request(.create(Item(id: 1, name: "x")))

        // The query comes in the other order; the JSON body with other spacing and key order.
        let transport = ReplayTransport(fixture: fixture, mode: .replay, upstream: Self.unreachable())
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/items/5?b=2&a=1")!)
        #expect(try await transport.send(request).statusCode == 200)
        request = URLRequest(url: URL(string: "https://api.example.com/v1/items")!)
        request.httpMethod = "POST"
        request.httpBody = Data(#"{ "name": "x", "id": 1 }"#.utf8)
        #expect(try await transport.send(request).statusCode == 201)

        // Something else is not answered: the error lists the closest recorded requests.
        await withKnownIssue {
            request = URLRequest(url: URL(string: "https://api.example.com/v1/items/5?b=3&a=1")!)
            let error = await #expect(throws: ReplayError.self) { try await transport.send(request) }
            guard case .noMatch(_, _, let closest) = error else { return }
            #expect(closest.first?.contains("differs in query") == true)
            #expect(error?.description.contains("COURIER_REPLAY=missing") == true)
        } matching: { issue in
            "\(issue)".contains("No recorded exchange in matching.har")
        }
    }

    @Test func repeatedRequestsReplayInTheOrderRecordedThenTheLastAgain() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("sequence.har")
        let network = StubTransport().on(.get, "v1/items/*", .sequence([.status(503), .status(200)]))
        let recorder = ReplayTransport(fixture: fixture, mode: .record, upstream: network)
        let request = URLRequest(url: URL(string: "https://api.example.com/v1/items/1")!)
        #expect(try await recorder.send(request).statusCode == 503)
        #expect(try await recorder.send(request).statusCode == 200)

        let player = ReplayTransport(fixture: fixture, mode: .replay, upstream: Self.unreachable())
        var statuses: [Int] = []
        for _ in 0..<3 { statuses.append(try await player.send(request).statusCode) }
        #expect(statuses == [503, 200, 200])
    }

    @Test func recordMissingSendsOnlyWhatTheFixtureLacks() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("missing.har")
        let first = Self.network()
        _ = try await Provider<API>(transport: ReplayTransport(fixture: fixture, mode: .recordMissing, upstream: first))
            .request(.item(1))
        #expect(first.requests.count == 1)

        let second = Self.network()
        let provider = Provider<API>(
            transport: ReplayTransport(fixture: fixture, mode: .recordMissing, upstream: second))
        _ = try await provider.request(.item(1))
        _ = try await provider.request(.binary)
        #expect(second.requests.map { $0.request.url?.path } == ["/v1/binary"])

        let offline = Self.unreachable()
        let player = Provider<API>(transport: ReplayTransport(fixture: fixture, mode: .replay, upstream: offline))
        #expect(try await player.request(.binary).data == Self.binary)
        #expect(try await player.request(.item(1)).map(Item.self).id == 1)
        #expect(offline.requests.isEmpty)
    }

    @Test func transportErrorsAreRecordedAndReplayed() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("errors.har")
        let network = StubTransport().on(nil, "**", .error(URLError(.notConnectedToInternet)))
        let request = URLRequest(url: URL(string: "https://api.example.com/v1/offline")!)
        let recorder = ReplayTransport(fixture: fixture, mode: .record, upstream: network)
        await #expect(throws: URLError.self) { try await recorder.send(request) }
        let player = ReplayTransport(fixture: fixture, mode: .replay, upstream: Self.unreachable())
        let error = await #expect(throws: URLError.self) { try await player.send(request) }
        #expect(error?.code == .notConnectedToInternet)
    }

    @Test func aMissingFixtureSaysHowToRecordIt() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let transport = ReplayTransport("absent", directory: folder.url, mode: .replay, upstream: Self.unreachable())
        #expect(transport.fixture.lastPathComponent == "absent.har")
        await withKnownIssue {
            let error = await #expect(throws: ReplayError.self) {
                try await transport.send(URLRequest(url: URL(string: "https://api.example.com/x")!))
            }
            #expect(error == .fixtureMissing(transport.fixture))
            #expect(error?.description.contains("COURIER_REPLAY=record") == true)
        } matching: { issue in
            "\(issue)".contains("No replay fixture at")
        }
    }

    @Test func badFixturesAndNamesAreTypedErrors() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let corrupt = try folder.file("corrupt.har", contents: Data("{ not json".utf8))
        let request = URLRequest(url: URL(string: "https://api.example.com/x")!)
        await withKnownIssue {
            let error = await #expect(throws: ReplayError.self) {
                try await ReplayTransport(fixture: corrupt, mode: .replay, upstream: Self.unreachable()).send(request)
            }
            guard case .unreadableFixture = error else {
                Issue.record("got \(String(describing: error))")
                return
            }
        } matching: { issue in
            "\(issue)".contains("cannot be read")
        }
        // A fixture path that is not a regular file is refused before it is read (a FIFO would
        // block the read for ever).
        let fifo = folder.url.appendingPathComponent("fifo.har")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        for path in [fifo, folder.url] {
            await withKnownIssue {
                let error = await #expect(throws: ReplayError.self) {
                    try await ReplayTransport(fixture: path, mode: .replay, upstream: Self.unreachable()).send(request)
                }
                guard case .unreadableFixture = error else {
                    Issue.record("\(path.lastPathComponent): got \(String(describing: error))")
                    return
                }
            } matching: { issue in
                "\(issue)".contains("cannot be read")
            }
        }
        try FileManager.default.removeItem(at: fifo)
        for name in ["../escape", "/etc/passwd", "", "a//b"] {
            await withKnownIssue {
                let error = await #expect(throws: ReplayError.self) {
                    try await ReplayTransport(name, directory: folder.url, mode: .record, upstream: Self.network())
                        .send(request)
                }
                #expect(error == .invalidFixtureName(name))
            } matching: { issue in
                "\(issue)".contains("is not a fixture name")
            }
        }
        #expect(folder.contents == ["corrupt.har"])
    }

    @Test func filtersRedactMoreAndMatchingCanRequireHeaders() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("filters.har")
        var redaction = FixtureRedaction.default
        redaction.headers.insert("x-tenant")
        redaction.responseBody = { body, _ in
            Data(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "one", with: "uno").utf8)
        }
        let network = Self.network()
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/items/1")!)
        request.setValue("acme", forHTTPHeaderField: "X-Tenant")
        request.setValue("en", forHTTPHeaderField: "Accept-Language")
        let recorder = ReplayTransport(fixture: fixture, mode: .record, upstream: network, redaction: redaction)
        _ = try await recorder.send(request)
        let text = try String(contentsOf: fixture, encoding: .utf8)
        #expect(!text.contains("acme"))
        #expect(text.contains("uno"))

        let player = ReplayTransport(
            fixture: fixture, mode: .replay, upstream: Self.unreachable(),
            matching: ReplayMatching(headers: ["accept-language"]), redaction: redaction)
        #expect(try await player.send(request).data == Data(#"{"id":1,"name":"uno"}"#.utf8))
        request.setValue("fr", forHTTPHeaderField: "Accept-Language")
        await withKnownIssue {
            let error = await #expect(throws: ReplayError.self) { try await player.send(request) }
            guard case .noMatch(_, _, let closest) = error else { return }
            #expect(closest.first?.contains("header accept-language") == true)
        } matching: { _ in
            true
        }
    }

    @Test func aHARFileFromABrowserReplaysToo() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // The shape browsers' developer tools export: pages, fractional times, more timings,
        // underscore fields, a Base64 body, a repeated header.
        let har = #"""
            {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
              "pages": [{"startedDateTime": "2026-11-24T06:00:00.000Z", "id": "page_1", "title": "x", "pageTimings": {}}],
              "entries": [{"_initiator": {"type": "script"}, "_resourceType": "fetch", "pageref": "page_1",
                "startedDateTime": "2026-11-24T06:00:01.123Z", "time": 41.75,
                "request": {"method": "GET", "url": "https://api.example.com/v1/binary?b=2&a=1", "httpVersion": "h2",
                  "headers": [{"name": ":authority", "value": "api.example.com"}], "queryString": [],
                  "cookies": [], "headersSize": -1, "bodySize": 0},
                "response": {"status": 200, "statusText": "", "httpVersion": "h2",
                  "headers": [{"name": "content-type", "value": "application/octet-stream"},
                              {"name": "x-part", "value": "1"}, {"name": "x-part", "value": "2"}],
                  "cookies": [], "content": {"size": 4, "mimeType": "application/octet-stream", "compression": 0,
                  "text": "AAEC/w==", "encoding": "base64"}, "redirectURL": "", "headersSize": -1, "bodySize": -1,
                  "_transferSize": 120, "_error": null},
                "cache": {}, "timings": {"blocked": 1.2, "dns": -1, "ssl": -1, "connect": -1, "send": 0.1,
                  "wait": 40.1, "receive": 0.35, "_blocked_queueing": 0.9}, "serverIPAddress": "192.0.2.1",
                "connection": "443"}]}}
            """#
        let fixture = try folder.file("browser.har", contents: Data(har.utf8))
        let transport = ReplayTransport(fixture: fixture, mode: .replay, upstream: Self.unreachable())
        let response = try await transport.send(
            URLRequest(url: URL(string: "https://api.example.com/v1/binary?a=1&b=2")!))
        #expect(response.data == Data([0, 1, 2, 255]))
        #expect(response.value(forHTTPHeaderField: "X-Part") == "1, 2")
    }

    /// A fixture Courier did not write, with a secret in its URL, matches the same request: the
    /// recorded side is redacted as the live one is. Found by review.
    @Test func aForeignFixtureWithASecretIsMatchedAfterRedaction() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let har = #"""
            {"log": {"version": "1.2", "creator": {"name": "hand", "version": "1"},
              "entries": [{"startedDateTime": "2026-11-24T06:00:01.123Z", "time": 1,
                "request": {"method": "GET", "url": "https://api.example.com/v1/items?api_key=abc",
                  "httpVersion": "HTTP/1.1", "headers": [{"name": "Authorization", "value": "Bearer abc"}],
                  "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
                "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [],
                  "cookies": [], "content": {"size": 2, "mimeType": "text/plain", "text": "ok"},
                  "redirectURL": "", "headersSize": -1, "bodySize": 2},
                "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}]}}
            """#
        let fixture = try folder.file("foreign.har", contents: Data(har.utf8))
        let player = ReplayTransport(fixture: fixture, mode: .replay, upstream: Self.unreachable())
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/items?api_key=abc")!)
        request.setValue("Bearer abc", forHTTPHeaderField: "Authorization")
        let response = try await player.send(request)
        #expect(response.data == Data("ok".utf8))
    }

    struct Login: TargetType {
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "login" }
        var method: HTTPMethod { .post }
        var headers: [String: String] { [:] }
        var task: HTTPTask { .json(["user": "ada", "password": "hunter2"]) }
        var requestCompression: RequestCompression? { RequestCompression(.gzip, minimumBytes: 0) }
    }

    /// A compressed request body reaches the fixture as the placeholder: its secrets cannot be
    /// found in gzip bytes, which anyone could decompress from the fixture. Found by review.
    @Test func aCompressedRequestBodyNeverReachesTheFixture() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("login.har")
        let network = StubTransport().on(.post, "login", .data(Data("{}".utf8)))
        let recorder = ReplayTransport(fixture: fixture, mode: .record, upstream: network)
        _ = try await Provider<Login>(transport: recorder).request(Login())
        await recorder.waitForRecordings()
        let sent = try #require(network.requests.first?.body)
        #expect(sent.starts(with: [0x1F, 0x8B]))  // gzip went on the wire
        let text = try String(contentsOf: fixture, encoding: .utf8)
        #expect(!text.contains(sent.base64EncodedString()))
        #expect(text.contains(#""text" : "REDACTED""#))
        // Replayed: the live request, compressed again, matches the placeholder.
        let player = ReplayTransport(fixture: fixture, mode: .replay, upstream: Self.unreachable())
        #expect(try await Provider<Login>(transport: player).request(Login()).data == Data("{}".utf8))
    }

    @Test func theModeComesFromItsName() {
        #expect(ReplayTransport.Mode(rawValue: "record") == .record)
        #expect(ReplayTransport.Mode(rawValue: "missing") == .recordMissing)
        #expect(ReplayTransport.Mode(rawValue: "replay") == .replay)
        #expect(ReplayTransport.Mode.environmentVariable == "COURIER_REPLAY")
    }
}
