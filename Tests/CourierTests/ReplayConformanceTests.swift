import Courier
import CourierTesting
import CourierTransportConformance
import Foundation
import Testing

/// A recording `ReplayTransport` is transparent: wrapped around `URLSessionTransport`, it passes
/// the transport conformance suite while it writes every exchange to its fixture.
///
/// One check at a time: each check has a session of its own, and FoundationNetworking runs every
/// session of the process on one work queue; 41 at once (a 20-hop redirect loop among them) kept
/// that queue busy enough under ThreadSanitizer for a check to pass its 60 s deadline. What this
/// suite shows is transparency, not concurrency (URLSessionConformanceTests covers that).
@Suite(.enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"), .serialized)
struct ReplayConformanceTests {
    @Test(arguments: TransportConformance.checks)
    func recordingConforms(_ check: TransportConformance.Check) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let transport = ReplayTransport(
            fixture: folder.url.appendingPathComponent("conformance.har"), mode: .record,
            upstream: URLSessionTransport())
        let servers = try #require(ConformanceServers.fromEnvironment)
        // A stream the check left early is recorded by a task of its own, after the check returns:
        // the folder goes only once that write is done (else the write fails, and says so).
        do {
            try await check.run(on: transport, servers: servers)
        } catch {
            await transport.waitForRecordings()
            throw error
        }
        await transport.waitForRecordings()
    }
}
