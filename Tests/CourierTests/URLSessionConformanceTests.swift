import Courier
import CourierTransportConformance
import Testing

/// `URLSessionTransport` against the transport conformance suite (the same checks
/// `AsyncHTTPClientTransport` passes in its own package).
@Suite(.enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"))
struct URLSessionConformanceTests {
    @Test(arguments: TransportConformance.checks)
    func conforms(_ check: TransportConformance.Check) async throws {
        try await check.run(on: URLSessionTransport(), servers: #require(ConformanceServers.fromEnvironment))
    }
}
