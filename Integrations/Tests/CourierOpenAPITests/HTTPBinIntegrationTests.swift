import Courier
import CourierOpenAPI
import Foundation
import OpenAPIRuntime
import Testing

/// The generated client against the real httpbin that scripts/test starts on 127.0.0.1
/// (`COURIER_HTTPBIN_URL`); skipped when it is not set.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["COURIER_HTTPBIN_URL"] != nil))
struct HTTPBinIntegrationTests {
    let server: URL
    let client: Client

    init() throws {
        server = try #require(ProcessInfo.processInfo.environment["COURIER_HTTPBIN_URL"].flatMap(URL.init))
        client = Client(serverURL: server, transport: CourierTransport())
    }

    /// A body past the memory threshold goes as a file upload from its spool file, which is gone after.
    @Test func aSpooledBodyIsUploadedWhole() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-spool-test-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = Client(
            serverURL: server, transport: CourierTransport(memoryThreshold: 1024, spoolDirectory: folder))
        let chunks = (0..<20).map { index in
            HTTPBody.ByteChunk(repeating: UInt8(ascii: "a") + UInt8(index), count: 10_000)
        }
        let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
        for chunk in chunks { continuation.yield(chunk) }
        continuation.finish()

        let posted = try await client.postBytes(body: .binary(HTTPBody(stream, length: .unknown))).ok.body.json
        #expect(posted.data == String(decoding: chunks.joined(), as: UTF8.self))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func queryBodyAndStreamedResponseRoundTrip() async throws {
        let echo = try await client.getEcho(query: .init(name: "ada lovelace")).ok.body.json
        #expect(echo.args?.additionalProperties["name"] == "ada lovelace")

        let posted = try await client.postBytes(body: .binary(HTTPBody("hello, world"))).ok.body.json
        #expect(posted.data == "hello, world")

        let body = try await client.streamBytes(path: .init(count: 100_000)).ok.body.binary
        var total = 0
        for try await chunk in body { total += chunk.count }
        #expect(total == 100_000)

        guard case .default(let statusCode, _) = try await client.getStatus(path: .init(code: 418)) else {
            Issue.record("418 is no documented response")
            return
        }
        #expect(statusCode == 418)
    }
}
