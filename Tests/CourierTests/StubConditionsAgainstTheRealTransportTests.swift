import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The stub's network conditions next to the real thing.
@Suite(.enabled(if: FaultServer.isAvailable, "needs scripts/test's fault server"), .timeLimit(.minutes(2)))
struct StubConditionsAgainstTheRealTransportTests {
    @Test func aDroppedConnectionFailsWithTheErrorURLSessionTransportGives() async throws {
        // The fault server announces 1,000 bytes and closes after 100. A patient deadline: under a
        // sanitizer with the whole suite running, the answer can take seconds.
        let real = await #expect(throws: CourierError.self) {
            try await Provider<Fault>().request(Fault(path: "close-mid-body", timeout: .seconds(60)))
        }
        let stub = StubTransport().on(
            .get, "close-mid-body", .data(Data(repeating: 0x78, count: 1_000)).droppingConnection(afterBytes: 100))
        let stubbed = await #expect(throws: CourierError.self) {
            // No deadline: a stall of the machine must not turn the stub's error into a timeout.
            try await Provider<Fault>(transport: stub).request(Fault(path: "close-mid-body", timeout: nil))
        }
        let realError = try #require(real?.underlyingError as? URLError)
        let stubError = try #require(stubbed?.underlyingError as? URLError)
        #expect(stubError.code == realError.code)
        #expect(stubError.localizedDescription == realError.localizedDescription)
    }

    /// A bodiless answer (a HEAD, a 204, a 304 with a `Content-Length`) in memory, as a download
    /// and with progress: the stub hands over what `URLSessionTransport` does.
    @Test(arguments: [("HEAD", ""), ("GET", "204"), ("GET", "304")])
    func aBodilessAnswerIsWhatURLSessionTransportGives(method: String, status: String) async throws {
        let query = "case=value&cl=10&n=10" + (status.isEmpty ? "" : "&status=\(status)")
        let stub = StubTransport().on(
            nil, "hostile-length",
            .data(
                Data(repeating: 0x68, count: 10), status: Int(status) ?? 200,
                headers: ["Content-Length": "10"]))
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var seen: [String] = []
        for (index, provider) in [Provider<Fault>(), Provider<Fault>(transport: stub)].enumerated() {
            for download in [false, true] {
                let file = folder.url.appendingPathComponent("\(index)-\(download).bin")
                let target = Fault(
                    path: "hostile-length?" + query, method: HTTPMethod(rawValue: method),
                    task: download ? .download(.folder(folder.url) { _, _ in file.lastPathComponent }) : .plain,
                    timeout: .seconds(60))
                var events: [String] = []
                var last: ProgressEvent?
                for try await event in provider.requestWithProgress(target) {
                    events.append("\(event.download?.completed ?? -1)/\(event.download?.total ?? -1)")
                    last = event
                }
                let response = try #require(last?.response)
                // Its size, not its contents: reading an empty file leaks in FoundationEssentials.
                let saved =
                    response.fileURL.map {
                        ((try? FileManager.default.attributesOfItem(atPath: $0.path))?[.size] as? NSNumber)?.intValue
                            ?? -1
                    } ?? -2
                seen.append(
                    "\(download) \(response.statusCode) \(response.data.count) \(saved) "
                        + events.joined(separator: ","))
            }
            let streamed = try await provider.stream(
                Fault(path: "hostile-length?" + query, method: HTTPMethod(rawValue: method), timeout: .seconds(60)))
            var chunks = 0
            for try await _ in streamed.chunks { chunks += 1 }
            seen.append("stream \(streamed.head.statusCode) \(chunks)")
        }
        #expect(Array(seen.prefix(3)) == Array(seen.suffix(3)))
    }
}
