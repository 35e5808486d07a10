import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Recorded from the local httpbin, replayed without it.
@Suite(.enabled(if: HTTPBin.isAvailable, "needs scripts/test's httpbin"), .timeLimit(.minutes(2)))
struct ReplayIntegrationTests {
    @Test func realExchangesReplayByteForByte() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("httpbin.har")
        let targets = [
            Bin(path: "bytes/2048", task: .parameters(["seed": 7], encoding: .queryString)),
            Bin(path: "get", task: .parameters(["b": 2, "a": 1], encoding: .queryString)),
            Bin(path: "basic-auth/user/passwd", headers: ["Authorization": "Basic dXNlcjpwYXNzd2Q="]),
            Bin(path: "status/201", method: .post, task: .json(["password": "hunter2", "name": "ada"])),
        ]
        let recorder = Provider<Bin>(
            transport: ReplayTransport(fixture: fixture, mode: .record, upstream: URLSessionTransport()))
        var recorded: [Data] = []
        for target in targets { recorded.append(try await recorder.request(target).data) }
        var recordedChunks = Data()
        let streamTarget = Bin(
            path: "stream-bytes/5000", task: .parameters(["seed": 3, "chunk_size": 700], encoding: .queryString))
        for try await chunk in try await recorder.stream(streamTarget).chunks { recordedChunks.append(chunk) }
        let download = Bin(
            path: "image/png", task: .download(.folder(folder.url.appendingPathComponent("rec")) { _, _ in "a.png" }))
        let recordedImage = try Data(contentsOf: try #require(try await recorder.request(download).fileURL))

        let offline = StubTransport(unmatched: .throwError)
        let player = Provider<Bin>(transport: ReplayTransport(fixture: fixture, mode: .replay, upstream: offline))
        for (target, body) in zip(targets.prefix(3), recorded) {
            #expect(try await player.request(target).data == body, "\(target.path)")
        }
        // The password went to httpbin; the fixture does not hold it, and the request still matches.
        #expect(try await player.request(targets[3]).statusCode == 201)
        var replayedChunks = Data()
        for try await chunk in try await player.stream(streamTarget).chunks { replayedChunks.append(chunk) }
        #expect(replayedChunks == recordedChunks)
        #expect(replayedChunks.count == 5000)
        let replayDownload = Bin(
            path: "image/png", task: .download(.folder(folder.url.appendingPathComponent("play")) { _, _ in "a.png" }))
        #expect(try Data(contentsOf: try #require(try await player.request(replayDownload).fileURL)) == recordedImage)
        #expect(offline.requests.isEmpty)

        let text = try String(contentsOf: fixture, encoding: .utf8)
        for secret in ["dXNlcjpwYXNzd2Q=", "hunter2"] { #expect(!text.contains(secret)) }
    }

    @Test func reRecordingGivesTheSameFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var files: [Data] = []
        for run in 0..<2 {
            let fixture = folder.url.appendingPathComponent("run\(run).har")
            let provider = Provider<Bin>(
                transport: ReplayTransport(fixture: fixture, mode: .record, upstream: URLSessionTransport()))
            _ = try await provider.request(Bin(path: "get", task: .parameters(["q": "swift"], encoding: .queryString)))
            _ = try await provider.request(
                Bin(path: "bytes/64", task: .parameters(["seed": 1], encoding: .queryString)))
            files.append(try Data(contentsOf: fixture))
        }
        #expect(files[0] == files[1])
    }
}
