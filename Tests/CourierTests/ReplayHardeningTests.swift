import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ReplayTransport against careless fixtures, parallel recorders and readers that leave early.
@Suite(.timeLimit(.minutes(2))) struct ReplayHardeningTests {
    /// A one-entry fixture for `GET https://api.example.com/v1/events` with body `abcdef` in the
    /// pieces `chunks` says.
    static func fixture(chunks: String) -> String {
        #"""
        {"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": [{
          "request": {"method": "GET", "url": "https://api.example.com/v1/events", "headers": [], "queryString": [],
            "bodySize": 0},
          "response": {"status": 200, "statusText": "OK", "headers": [], "bodySize": 6,
            "content": {"size": 6, "mimeType": "text/event-stream", "text": "abcdef"}, "_chunks": \#(chunks)}}]}}
        """#
    }

    @Test(arguments: [
        "[\(Int.max), \(Int.max), 6]", "[\(Int.max), 1]", "[-1, 7]", "[3, -3, 6]", "[7]", "[2, 2]", "[2, 2, 2, 2]",
    ])
    func chunkSizesThatCannotBeTheBodyAreAnUnreadableFixture(chunks: String) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = try folder.file("chunks.har", contents: Data(Self.fixture(chunks: chunks).utf8))
        let transport = ReplayTransport(fixture: fixture, mode: .replay, upstream: StubTransport())
        let request = URLRequest(url: URL(string: "https://api.example.com/v1/events")!)
        await withKnownIssue {
            let error = await #expect(throws: ReplayError.self) {
                _ = try await transport.stream(Transfer(request: request))
            }
            guard case .unreadableFixture(let url, let reason) = error else {
                Issue.record("expected unreadableFixture, got \(String(describing: error))")
                return
            }
            #expect(url == fixture)
            #expect(reason.contains("_chunks"))
        } matching: { issue in
            "\(issue)".contains("cannot be read")
        }
    }

    @Test func validChunkSizesReplayInTheirPieces() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = try folder.file("chunks.har", contents: Data(Self.fixture(chunks: "[0, 2, 4]").utf8))
        let transport = ReplayTransport(fixture: fixture, mode: .replay, upstream: StubTransport())
        let request = URLRequest(url: URL(string: "https://api.example.com/v1/events")!)
        var pieces: [Data] = []
        for try await chunk in try await transport.stream(Transfer(request: request)).body { pieces.append(chunk) }
        #expect(pieces.reduce(Data(), +) == Data("abcdef".utf8))
    }

    // MARK: Parallel recorders

    @Test(arguments: [ReplayTransport.Mode.record, .recordMissing])
    func sixteenTransportsRecordingIntoOneFixtureKeepEveryExchange(mode: ReplayTransport.Mode) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("shared.har")
        // A recording from an earlier run: record mode starts the file anew, record-missing adds to it.
        let earlier = folder.url.appendingPathComponent("earlier.har")
        _ = try await ReplayTransport(fixture: earlier, mode: .record, upstream: Self.network())
            .send(URLRequest(url: URL(string: "https://api.example.com/v1/items/old")!))
        try FileManager.default.moveItem(at: earlier, to: fixture)
        let shared = fixture.deletingLastPathComponent().appendingPathComponent("./shared.har")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<16 {
                group.addTask {
                    // One transport per caller, as each parallel test makes its own; every other
                    // one names the file by another spelling of the same path.
                    let transport = ReplayTransport(
                        fixture: index.isMultiple(of: 2) ? fixture : shared, mode: mode, upstream: Self.network())
                    _ = try await transport.send(
                        URLRequest(url: URL(string: "https://api.example.com/v1/items/\(index)")!))
                }
            }
            try await group.waitForAll()
        }
        let har = try JSONSerialization.jsonObject(with: Data(contentsOf: fixture)) as? [String: Any]
        let entries = try #require((har?["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let urls = Set(entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String })
        let expected = Set((0..<16).map { "https://api.example.com/v1/items/\($0)" })
        #expect(urls == (mode == .record ? expected : expected.union(["https://api.example.com/v1/items/old"])))
        #expect(entries.count == (mode == .record ? 16 : 17))
        #expect(folder.contents == ["shared.har"])

        // And every one of them replays.
        let player = ReplayTransport(fixture: fixture, mode: .replay, upstream: StubTransport())
        for index in 0..<16 {
            _ = try await player.send(URLRequest(url: URL(string: "https://api.example.com/v1/items/\(index)")!))
        }
    }

    static func network() -> StubTransport {
        StubTransport(unmatched: .throwError)
            .on(.get, "v1/items/*", .data(Data(#"{"id":1}"#.utf8), headers: ["Content-Type": "application/json"]))
    }

    // MARK: A reader that leaves early

    /// A live event feed: sends its events, then stays open until the reader leaves.
    struct LiveFeed: Transport {
        let events: [String]

        func send(_ transfer: Transfer) async throws -> Response { throw URLError(.unsupportedURL) }

        func stream(_ transfer: Transfer) async throws -> StreamedResponse {
            let (body, writer) = ResponseBody.makeStream(limits: transfer.limits)
            for event in events { _ = writer.write(Data(event.utf8)) }
            let head = Response(
                statusCode: 200, data: Data(), request: transfer.request,
                response: HTTPURLResponse(
                    url: transfer.request.url!, statusCode: 200, httpVersion: "HTTP/1.1",
                    headerFields: ["Content-Type": "text/event-stream"]))
            return StreamedResponse(head: head, body: body)
        }
    }

    @Test func aFeedLeftWithBreakRecordsWhatWasReadAndReplaysItThenEnds() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("feed.har")
        let events = ["data: {\"n\":1,\"token\":\"feed-secret\"}\n\n", "data: {\"n\":2}\n\n"]
        let request = URLRequest(url: URL(string: "https://api.example.com/v1/feed")!)
        let recorder = ReplayTransport(fixture: fixture, mode: .record, upstream: LiveFeed(events: events))
        var read: [Data] = []
        for try await chunk in try await recorder.stream(Transfer(request: request)).body {
            read.append(chunk)
            if read.count == 2 { break }
        }
        await recorder.waitForRecordings()
        let text = try String(contentsOf: fixture, encoding: .utf8)
        #expect(text.contains(#""_cutShort" : true"#))
        #expect(!text.contains("feed-secret"))

        // Replay gives the recorded chunks, then ends the way the recording did: cut short.
        let player = ReplayTransport(fixture: fixture, mode: .replay, upstream: StubTransport())
        var replayed: [Data] = []
        let error = await #expect(throws: CourierError.self) {
            for try await chunk in try await player.stream(Transfer(request: request)).body { replayed.append(chunk) }
        }
        #expect(replayed.count == 2)
        #expect(String(decoding: replayed[1], as: UTF8.self) == events[1])
        guard case .recordingCutShort(let described, let file) = error?.underlyingError as? ReplayError else {
            Issue.record("expected recordingCutShort, got \(String(describing: error))")
            return
        }
        #expect(described == "GET https://api.example.com/v1/feed" && file == fixture)
        // A reader that stops where the recording did sees exactly what it saw then.
        var again: [Data] = []
        for try await chunk in try await player.stream(Transfer(request: request)).body {
            again.append(chunk)
            if again.count == 2 { break }
        }
        #expect(again.count == 2)
    }
}
