import Courier
import CourierOpenAPI
import Foundation
import OpenAPIRuntime
import Testing

/// The generated client against the real httpbin that scripts/test starts on 127.0.0.1
/// (`COURIER_HTTPBIN_URL`); skipped when it is not set.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["COURIER_HTTPBIN_URL"] != nil))
struct HTTPBinIntegrationTests {
    let client: Client

    init() throws {
        let server = try #require(ProcessInfo.processInfo.environment["COURIER_HTTPBIN_URL"].flatMap(URL.init))
        client = Client(serverURL: server, transport: CourierTransport())
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
