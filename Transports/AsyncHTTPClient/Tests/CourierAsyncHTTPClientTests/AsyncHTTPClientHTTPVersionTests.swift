import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierTransportConformance
import Foundation
import NIOSSL
import Testing

/// What `AsyncHTTPClientTransport` negotiates with `scripts/test`'s nginx, and what it reports of it.
/// That concurrent requests share connections, and that a reported version is the one the server
/// saw, is the conformance suite's check for every transport (TLSChecks).
@Suite(.enabled(if: HTTPSClient.shared != nil, "needs scripts/test's TLS servers"))
struct AsyncHTTPClientHTTPVersionTests {
    struct Small: TargetType {
        var baseURL: URL
        var path: String { "small.json" }
        var headers: [String: String] { [:] }
        var marker: String
        var task: HTTPTask { .parameters(["m": marker], encoding: .queryString) }
    }

    @Test func http2IsNegotiatedAndReported() async throws {
        let client = try #require(HTTPSClient.shared)
        let marker = UUID().uuidString
        let provider = Provider<Small>(transport: AsyncHTTPClientTransport(client: client))
        let response = try await provider.request(Small(baseURL: try #require(TLSTestServers.url), marker: marker))
        #expect(response.httpVersion == "HTTP/2")
        #expect(response.metrics?.attempts.last?.transfer?.httpVersion == "HTTP/2")
        let line = try #require(await TLSTestServers.requests(containing: marker, atLeast: 1).first)
        #expect(line.split(separator: " ").dropFirst().first == "HTTP/2.0", "\(line)")
    }
}
