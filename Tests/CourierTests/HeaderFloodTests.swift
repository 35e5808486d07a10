import Courier
import CourierTransportConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A hostile server's head of thousands of fields (the fault server's `/header-flood`) through
/// URLSession: read whole, every field kept, repeats joined, in time linear in their count.
@Suite(.enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"))
struct HeaderFloodTests {
    struct Target: TargetType {
        var baseURL: URL
        var count: Int
        var cookies: Int
        var path: String { "header-flood" }
        var task: HTTPTask { .parameters(["n": count, "c": cookies], encoding: .queryString) }
        var headers: [String: String] { [:] }
    }

    @Test(.timeLimit(.minutes(1))) func aHeadOfThousandsOfFieldsIsReadWhole() async throws {
        let fault = try #require(ConformanceServers.fromEnvironment?.fault)
        let provider = Provider<Target>(transport: URLSessionTransport())
        let distinct = try await provider.request(Target(baseURL: fault, count: 8_000, cookies: 0))
        #expect(distinct.statusCode == 200)
        #expect(distinct.data == Data("ok".utf8))
        #expect(distinct.value(forHTTPHeaderField: "F0") == "v")
        // 7,999 in base 36: 667.
        #expect(distinct.value(forHTTPHeaderField: "F667") == "v")
        let repeated = try await provider.request(Target(baseURL: fault, count: 0, cookies: 5_000))
        let cookies = try #require(repeated.value(forHTTPHeaderField: "set-cookie"))
        #expect(cookies.utf8.count == 5_000 * 3 - 2)
    }
}
