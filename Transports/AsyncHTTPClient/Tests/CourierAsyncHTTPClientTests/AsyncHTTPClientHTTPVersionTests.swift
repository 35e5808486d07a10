import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierTransportConformance
import Foundation
import NIOSSL
import Testing

/// What `AsyncHTTPClientTransport` negotiates and reports with `scripts/test`'s nginx.
@Suite(.enabled(if: HTTPSClient.shared != nil, "needs scripts/test's TLS servers"))
struct AsyncHTTPClientHTTPVersionTests {
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

    @Test func http2IsNegotiatedAndReported() async throws {
        let client = try #require(HTTPSClient.shared)
        let marker = UUID().uuidString
        let provider = Provider<Small>(transport: AsyncHTTPClientTransport(client: client))
        let response = try await provider.request(Small(baseURL: try #require(TLSTestServers.url), marker: marker))
        #expect(response.httpVersion == "HTTP/2")
        #expect(response.metrics?.attempts.last?.transfer?.httpVersion == "HTTP/2")
        let line = try #require(TLSTestServers.requests(containing: marker).first)
        #expect(line.split(separator: " ").dropFirst().first == "HTTP/2.0", "\(line)")
    }

    @Test func concurrentRequestsShareConnections() async throws {
        let client = try #require(HTTPSClient.shared)
        let seen = try await Self.connections(for: Provider<Small>(transport: AsyncHTTPClientTransport(client: client)))
        print("AsyncHTTPClient: 64 concurrent requests over \(seen.count) connections, \(seen.protocols)")
        #expect(seen.protocols == ["HTTP/2.0"])
        // One when the machine is idle; on a busy one the pool may open up to its HTTP/1.1 limit
        // (8) before the first connection's ALPN answer says HTTP/2.
        #expect(seen.count <= 8)
    }
}
