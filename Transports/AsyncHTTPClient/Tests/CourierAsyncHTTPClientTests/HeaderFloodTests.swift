import Courier
import CourierAsyncHTTPClient
import CourierTransportConformance
import Foundation
import Testing

/// A hostile server's head of thousands of fields (the fault server's `/header-flood`), as many
/// as AsyncHTTPClient lets through (80 KiB of head): read in time linear in their count (a scan
/// for each field's name among the earlier ones made this one head cost seconds in a debug build),
/// every field kept, repeats joined.
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
        let provider = Provider<Target>(transport: AsyncHTTPClientTransport())
        do {
            let distinct = try await provider.request(Target(baseURL: fault, count: 8_000, cookies: 0))
            #expect(distinct.statusCode == 200)
            #expect(distinct.data == Data("ok".utf8))
            #expect(distinct.value(forHTTPHeaderField: "F0") == "v")
            // 7,999 in base 36: 667.
            #expect(distinct.value(forHTTPHeaderField: "F667") == "v")
            #expect(distinct.value(forHTTPHeaderField: "F668") == nil)
            let repeated = try await provider.request(Target(baseURL: fault, count: 0, cookies: 5_000))
            let cookies = try #require(repeated.value(forHTTPHeaderField: "set-cookie"))
            #expect(cookies.utf8.count == 5_000 * 3 - 2)
        } catch {
            // A client that refuses a head this large must say so with a typed error, in time.
            Issue.record("refused: \(error)")
        }
    }
}
