import Courier
import CourierAsyncHTTPClient
import CourierTransportConformance
import Foundation
import Testing

/// A base URL whose scheme is written in any case (`HTTP://`, `hTtP://`) is the same destination:
/// the scheme check, traffic control's host key and AsyncHTTPClient all read it without regard to
/// case, and the request is answered.
@Suite(.enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"))
struct MixedCaseSchemeTests {
    struct Target: TargetType {
        var baseURL: URL
        var path: String { "ok" }
        var headers: [String: String] { [:] }
    }

    @Test func aSchemeInAnyCaseIsAnswered() async throws {
        let fault = try #require(ConformanceServers.fromEnvironment?.fault)
        let text = fault.absoluteString
        try #require(text.hasPrefix("http://"))
        let provider = Provider<Target>(
            transport: AsyncHTTPClientTransport(), traffic: TrafficPolicy(maxRequests: 4, maxRequestsPerHost: 1))
        for scheme in ["HTTP", "hTtP", "http"] {
            let base = try #require(URL(string: scheme + text.dropFirst(4)))
            let response = try await provider.request(Target(baseURL: base))
            #expect(response.statusCode == 200, "\(scheme)")
        }
        // Not http, whatever the case: refused before anything is sent.
        for scheme in ["HTTPX", "http+unix"] {
            let base = try #require(URL(string: scheme + text.dropFirst(4)))
            await #expect(throws: CourierError.self) { try await provider.request(Target(baseURL: base)) }
        }
    }
}
