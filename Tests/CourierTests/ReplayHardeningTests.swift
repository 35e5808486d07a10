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
}
