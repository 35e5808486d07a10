import Courier
import CourierTransportConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What `URLSessionTransport` negotiates with `scripts/test`'s nginx.
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

    /// 64 requests at once to one host: how many connections nginx saw (distinct `$connection`).
    static func connections(for provider: Provider<Small>) async throws -> (count: Int, protocols: Set<String>) {
        let batch = UUID().uuidString
        let base = try #require(TLSTestServers.url)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<64 {
                group.addTask {
                    try await provider.request(Small(baseURL: base, marker: "\(batch)-\(index)")).statusCode
                }
            }
            for try await status in group { #expect(status == 200) }
        }
        let lines = TLSTestServers.requests(containing: batch)
        #expect(lines.count == 64)
        let fields = lines.map { $0.split(separator: " ") }
        return (
            Set(fields.compactMap { $0.first }).count, Set(fields.compactMap { $0.dropFirst().first.map(String.init) })
        )
    }

    @Test func http2IsNegotiatedButNotReported() async throws {
        let marker = UUID().uuidString
        let provider = Provider<Small>(transport: URLSessionTransport())
        let response = try await provider.request(Small(baseURL: try #require(TLSTestServers.url), marker: marker))
        #expect(response.statusCode == 200)
        // The server saw HTTP/2 (libcurl with nghttp2, by ALPN); FoundationNetworking does not say.
        let line = try #require(TLSTestServers.requests(containing: marker).first)
        #expect(line.split(separator: " ").dropFirst().first == "HTTP/2.0", "\(line)")
        #if canImport(FoundationNetworking)
            #expect(response.httpVersion == nil)
        #endif
    }

    @Test func concurrentRequestsShareConnections() async throws {
        let provider = Provider<Small>(transport: URLSessionTransport())
        // One request first, so the 64 meet an open HTTP/2 connection instead of starting up to six
        // TLS handshakes at once on FoundationNetworking's one work queue (see above).
        _ = try await provider.request(Small(baseURL: try #require(TLSTestServers.url), marker: UUID().uuidString))
        let seen = try await Self.connections(for: provider)
        print("URLSession: 64 concurrent requests over \(seen.count) connections, \(seen.protocols)")
        #expect(seen.protocols == ["HTTP/2.0"])
        // One when the machine is idle; on a busy one libcurl opens up to its per-host limit (6)
        // before the first connection's ALPN answer says HTTP/2 (seen in the full suite).
        #expect(seen.count <= 6)
    }
}
