import Courier
import CourierTransportConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What `URLSessionTransport` negotiates with `scripts/test`'s nginx, and what it reports of it.
/// That concurrent requests share connections, and that a reported version is the one the server
/// saw, is the conformance suite's check for every transport (TLSChecks).
@Suite(
    .enabled(
        if: TLSTestServers.isAvailable && TLSTestServers.systemTrustsTestCA,
        "needs scripts/test's TLS servers with the test CA in this process's system bundle"))
struct URLSessionHTTPVersionTests {
    struct Small: TargetType {
        var baseURL: URL
        var path: String { "small.json" }
        var headers: [String: String] { [:] }
        var marker: String
        var task: HTTPTask { .parameters(["m": marker], encoding: .queryString) }
    }

    @Test func http2IsNegotiatedButNotReported() async throws {
        let marker = UUID().uuidString
        let provider = Provider<Small>(transport: URLSessionTransport())
        let response = try await provider.request(Small(baseURL: try #require(TLSTestServers.url), marker: marker))
        #expect(response.statusCode == 200)
        // The server saw HTTP/2 (libcurl with nghttp2, by ALPN); FoundationNetworking does not say.
        let line = try #require(await TLSTestServers.requests(containing: marker, atLeast: 1).first)
        #expect(line.split(separator: " ").dropFirst().first == "HTTP/2.0", "\(line)")
        #if canImport(FoundationNetworking)
            #expect(response.httpVersion == nil)
        #endif
    }
}
