import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierTransportConformance
import Foundation
import NIOSSL
import Testing

/// `AsyncHTTPClientTransport` over HTTPS: the conformance suite's HTTPS checks against
/// `scripts/test`'s TLS servers (nginx, HTTP/2 by ALPN), on a client that trusts the test CA
/// through its `TLSConfiguration` (and nothing else: the system's roots are replaced), with the
/// HTTP/1.1 upload client the transport's documentation asks for beside a client of your own.
@Suite(.enabled(if: HTTPSClient.shared != nil, "needs scripts/test's TLS servers"))
struct AsyncHTTPClientHTTPSConformanceTests {
    @Test(arguments: TransportConformance.httpsChecks)
    func conforms(_ check: TransportConformance.Check) async throws {
        let transport = AsyncHTTPClientTransport(
            client: try #require(HTTPSClient.shared), uploadClient: HTTPSClient.http1)
        try await check.run(on: transport, servers: #require(ConformanceServers.tlsFromEnvironment))
    }
}

/// One client for the suite, made once and never shut down (as `AsyncHTTPClientTransport.sharedClient`).
enum HTTPSClient {
    static let shared: HTTPClient? = make(httpVersion: .automatic)
    /// The same, HTTP/1.1 only: the upload client that goes with ``shared``.
    static let http1: HTTPClient? = make(httpVersion: .http1Only)

    /// A client that trusts the test CA; `nil` without the TLS servers. A test that makes one
    /// shuts it down (``shared`` and ``http1`` never are).
    static func make(httpVersion: HTTPClient.Configuration.HTTPVersion) -> HTTPClient? {
        guard ConformanceServers.tlsFromEnvironment != nil, let authority = TLSTestServers.certificateAuthority else {
            return nil
        }
        var configuration = AsyncHTTPClientTransport.clientConfiguration()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(authority)
        configuration.tlsConfiguration = tls
        configuration.httpVersion = httpVersion
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
