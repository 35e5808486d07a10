import Courier
import CourierTesting
import CourierTransportConformance
import Foundation
import Testing

/// A recording `ReplayTransport` is transparent: wrapped around `URLSessionTransport`, it passes
/// the transport conformance suite while it writes every exchange to its fixture.
@Suite(.enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"))
struct ReplayConformanceTests {
    @Test(arguments: TransportConformance.checks)
    func recordingConforms(_ check: TransportConformance.Check) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let transport = ReplayTransport(
            fixture: folder.url.appendingPathComponent("conformance.har"), mode: .record,
            upstream: URLSessionTransport())
        try await check.run(on: transport, servers: #require(ConformanceServers.fromEnvironment))
    }
}
