import Courier
import CourierTransportConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSessionTransport` over HTTPS: the conformance suite's HTTPS checks against `scripts/test`'s
/// TLS servers (nginx, HTTP/2 by ALPN). FoundationNetworking trusts only the system's bundle, so
/// these run where `scripts/test` could add the test CA to it for this process (root, `unshare
/// --mount`); elsewhere they are skipped, and `scripts/test` says why. One check at a time:
/// FoundationNetworking runs every session's TLS handshakes on one work queue, and task creation
/// waits for that queue, so forty handshakes at once (slow under ThreadSanitizer) held up the
/// cooperative threads of the whole test process for seconds.
@Suite(
    .serialized,
    .enabled(
        if: ConformanceServers.tlsFromEnvironment != nil && TLSTestServers.systemTrustsTestCA,
        "needs scripts/test's TLS servers with the test CA in this process's system bundle"))
struct URLSessionHTTPSConformanceTests {
    @Test(arguments: TransportConformance.httpsChecks)
    func conforms(_ check: TransportConformance.Check) async throws {
        try await check.run(on: URLSessionTransport(), servers: #require(ConformanceServers.tlsFromEnvironment))
    }
}
