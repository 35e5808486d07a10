import Courier
import CourierAsyncHTTPClient
import CourierTransportConformance
import Foundation
import Testing

/// `Content-Length` values next to `Int64.max`, which FoundationNetworking itself traps on (it
/// reads libcurl's length through a `Double`, and 2^63 − 512 … 2^63 − 1 round to 2^63), so only
/// this transport can be held to them: each is a typed error, with and without a body limit.
@Suite(.enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"))
struct HostileLengthTests {
    struct Target: TargetType {
        var baseURL: URL
        var value: String
        var path: String { "hostile-length" }
        var task: HTTPTask { .parameters(["case": "value", "cl": value, "n": 10], encoding: .queryString) }
        var headers: [String: String] { [:] }
    }

    @Test(arguments: ["9223372036854775807", "9223372036854775296", "9223372036854775808"])
    func aLengthNextToInt64MaxIsAnError(value: String) async throws {
        let fault = try #require(ConformanceServers.fromEnvironment?.fault)
        for limits in [Limits.default, Limits(maxResponseBytes: .max)] {
            let provider = Provider<Target>(transport: AsyncHTTPClientTransport(), limits: limits)
            do throws(CourierError) {
                let response = try await provider.request(Target(baseURL: fault, value: value))
                Issue.record("answered \(response.statusCode) with \(response.data.count) bytes")
            } catch {
                switch error {
                case .limitExceeded, .underlying: break
                default: Issue.record("\(error)")
                }
            }
        }
    }
}
