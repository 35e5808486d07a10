import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Attacks on `StubTransport`'s bodiless answers (HEAD, 1xx, 204, 304).
@Suite(.timeLimit(.minutes(2))) struct StubTransportBodilessTests {
    /// Made anew each time: a stored `Data` global is reported by LeakSanitizer (it cannot see
    /// the storage's pointer in `Data`'s representation).
    static var big: Data { Data(repeating: 7, count: 100_000) }

    @Test func aHeadWithAHugeAnnouncedCompressedBodyPassesAZeroLimit() async throws {
        let url = URL(string: "http://127.0.0.1:9/x")!
        let http = try #require(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["Content-Length": "100000", "Content-Encoding": "gzip"]))
        let transport = StubTransport().on(nil, "**", .response(http, data: Self.big))
        let provider = Provider<Fault>(transport: transport)
        let target = Fault(path: "x", method: .head, timeout: nil, limits: Limits(maxResponseBytes: 0))
        let response = try await provider.request(target)
        #expect(response.data.isEmpty)
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "100000")
        var chunks = 0
        for try await _ in try await provider.stream(target).chunks { chunks += 1 }
        #expect(chunks == 0)
        var events: [ProgressEvent] = []
        for try await event in provider.requestWithProgress(target) { events.append(event) }
        #expect(events.last?.response?.data.isEmpty == true)
        #expect(events.allSatisfy { ($0.download?.completed ?? 0) == 0 })
        #expect(events.allSatisfy { ($0.download?.total ?? 0) == 0 })
    }

    @Test(arguments: ["file", "handler", "sequence", "scripted", "dropped0"])
    func aHeadGetsNoBodyWhateverTheAnswer(kind: String) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("fixture.json")
        try Self.big.write(to: fixture)
        let answer: StubAnswer =
            switch kind {
            case "file": .file(fixture)
            case "handler": .handler { Response(statusCode: 200, data: Self.big, request: $0) }
            case "sequence": .sequence([.data(Self.big, status: 503), .data(Self.big)])
            case "scripted": .scripted { _ in .data(Self.big).throttled(bytesPerSecond: 1) }
            default: .data(Self.big, status: 204).droppingConnection(afterBytes: 0)
            }
        let transport = StubTransport(clock: TestClock()).on(nil, "**", answer)
        let provider = Provider<Fault>(transport: transport)
        for _ in 0..<2 {
            let response = try await provider.request(Fault(path: "x", method: .head, timeout: nil))
            #expect(response.data.isEmpty, "\(kind)")
            var chunks = 0
            for try await _ in try await provider.stream(Fault(path: "x", method: .head, timeout: nil)).chunks {
                chunks += 1
            }
            #expect(chunks == 0, "\(kind)")
        }
        #expect(transport.requests.count == 4)
        #expect(transport.requests.allSatisfy { $0.request.httpMethod == "HEAD" })
    }

    @Test(arguments: [101, 199, 204, 304])
    func bodilessStatusesAsAGet(status: Int) async throws {
        let transport = StubTransport(clock: TestClock())
            .on(nil, "**", .data(Self.big, status: status).droppingConnection(afterBytes: 0))
        let provider = Provider<Fault>(transport: transport)
        let response = try await provider.request(Fault(path: "x", timeout: nil))
        #expect(response.statusCode == status)
        #expect(response.data.isEmpty)
    }

    @Test func anErrorAnswerToAHeadStillThrows() async throws {
        let transport = StubTransport().on(nil, "**", .error(URLError(.notConnectedToInternet)))
        let provider = Provider<Fault>(transport: transport)
        await #expect {
            try await provider.request(Fault(path: "x", method: .head, timeout: nil))
        } throws: { error in
            ((error as? CourierError)?.underlyingError as? URLError)?.code == .notConnectedToInternet
        }
        await #expect(throws: (any Error).self) {
            try await provider.stream(Fault(path: "x", method: .head, timeout: nil))
        }
    }

    @Test(arguments: ["request", "stream"])
    func aStalledHeadStallsUntilCancelled(way: String) async throws {
        let clock = TestClock()
        let transport = StubTransport(clock: clock).on(nil, "**", .stall)
        let provider = Provider<Fault>(transport: transport)
        let task = Task {
            if way == "request" {
                _ = try await provider.request(Fault(path: "x", method: .head, timeout: nil))
            } else {
                _ = try await provider.stream(Fault(path: "x", method: .head, timeout: nil))
            }
        }
        // It waits on the clock, which nobody moves: only the cancel ends it.
        await clock.waitForSleepers(1)
        task.cancel()
        await #expect(throws: (any Error).self) { try await task.value }
    }

    @Test func aHeadCancelledMidDelayThrows() async throws {
        let clock = TestClock()
        let transport = StubTransport(clock: clock).on(nil, "**", .data(Self.big).delayed(by: .seconds(5)))
        let provider = Provider<Fault>(transport: transport)
        let task = Task { try await provider.request(Fault(path: "x", method: .head, timeout: nil)) }
        await clock.waitForSleepers(1)
        task.cancel()
        await #expect(throws: (any Error).self) { try await task.value }
    }

    @Test(arguments: [("HEAD", 200), ("GET", 204), ("GET", 304)])
    func aBodilessDownloadIsAnEmptyFile(method: String, status: Int) async throws {
        struct Download: TargetType {
            var headers: [String: String] { [:] }
            let folder: URL
            let method: HTTPMethod
            var baseURL: URL { URL(string: "https://files.example.com")! }
            var path: String { "report.csv" }
            var task: HTTPTask { .download(.folder(folder) { _, _ in "report.csv" }) }
        }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let transport = StubTransport(clock: TestClock())
            .on(nil, "report.csv", .data(Self.big, status: status).stalling(afterBytes: 10))
        let provider = Provider<Download>(transport: transport)
        let target = Download(folder: folder.url, method: HTTPMethod(rawValue: method))
        var last: ProgressEvent?
        for try await event in provider.requestWithProgress(target) { last = event }
        let saved = try #require(last?.response?.fileURL)
        // Its size, not its contents: reading an empty file leaks in FoundationEssentials.
        #expect(try FileManager.default.attributesOfItem(atPath: saved.path)[.size] as? NSNumber == 0)
        #expect((last?.download?.completed ?? 0) == 0)
        let listed = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
        #expect(listed == ["report.csv"])
    }

    @Test func aRecordedHeadVerifies() async throws {
        let transport = StubTransport()
        let route = transport.route(.head, "x", .data(Self.big))
        let provider = Provider<Fault>(transport: transport)
        _ = try await provider.request(Fault(path: "x", method: .head, timeout: nil))
        #expect(transport.verify(route, times: 1))
    }
}
