import Courier
import CourierAsyncHTTPClient
import CourierTransportConformance
import Testing

/// `AsyncHTTPClientTransport` against the transport conformance suite, the same checks
/// `URLSessionTransport` passes in the root package.
@Suite(.enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"))
struct AsyncHTTPClientConformanceTests {
    @Test(arguments: TransportConformance.checks)
    func conforms(_ check: TransportConformance.Check) async throws {
        try await check.run(on: AsyncHTTPClientTransport(), servers: #require(ConformanceServers.fromEnvironment))
    }
}
