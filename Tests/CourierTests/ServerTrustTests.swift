import Courier
import CourierTransportConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Refused certificates and `https` → `http` redirects: the rules without a network, then
/// `URLSessionTransport` against `scripts/test`'s TLS servers.
struct ServerTrustTests {
    @Test(arguments: [
        ("SSL certificate problem: certificate has expired", ServerTrustReason.expired),
        ("SSL certificate problem: certificate is not yet valid", .notYetValid),
        ("SSL certificate problem: self-signed certificate", .selfSigned),
        ("SSL certificate problem: self signed certificate", .selfSigned),
        ("SSL certificate problem: self-signed certificate in certificate chain", .untrustedIssuer),
        ("SSL certificate problem: unable to get local issuer certificate", .untrustedIssuer),
        ("SSL certificate problem: unable to verify the first certificate", .untrustedIssuer),
        ("SSL certificate problem: certificate revoked", .revoked),
        ("SSL: no alternative certificate subject name matches target host name 'api.example.com'", .hostnameMismatch),
        ("SSL: certificate subject name 'other' does not match target host name 'api.example.com'", .hostnameMismatch),
        ("SSL certificate problem: invalid CA certificate", .other),
    ])
    func libcurlMessagesBecomeReasons(message: String, reason: ServerTrustReason) throws {
        let url = try #require(URL(string: "https://api.example.com:8443/v1"))
        let error = URLError(
            .unknown, userInfo: [NSLocalizedDescriptionKey: message, NSURLErrorFailingURLErrorKey: url])
        let typed = CourierError(error)
        guard case .serverTrust(let host, let found, let underlying) = typed else {
            Issue.record("\(typed)")
            return
        }
        #expect(host == "api.example.com")
        #expect(found == reason)
        #expect((underlying as? URLError)?.code == .unknown)
        #expect(typed.description == "The server's certificate for api.example.com was refused: \(reason).")
        #expect(typed.errorCode == 19)
        #expect(!typed.isTimeout && !typed.isCancellation)
    }

    @Test(arguments: ["SSL connect error", "Couldn't connect to server", "Failure when receiving data from the peer"])
    func otherLibcurlFailuresStayUnderlying(message: String) {
        let error = CourierError(URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: message]))
        guard case .underlying = error else {
            Issue.record("\(error)")
            return
        }
    }

    @Test func appleCodesBecomeReasons() {
        let cases: [(URLError.Code, ServerTrustReason)] = [
            (.serverCertificateHasBadDate, .expired), (.serverCertificateNotYetValid, .notYetValid),
            (.serverCertificateHasUnknownRoot, .untrustedIssuer), (.serverCertificateUntrusted, .other),
        ]
        for (code, reason) in cases {
            guard case .serverTrust(_, let found, _) = CourierError(URLError(code)) else {
                Issue.record("\(code)")
                continue
            }
            #expect(found == reason)
        }
    }

    static func redirect(_ status: Int, to location: String) -> Response {
        Response(
            statusCode: status, data: Data(), request: nil, url: TransportRulesTests.origin,
            headerFields: [("location", location)])
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func httpsToHttpIsRefusedByDefault(status: Int) {
        #expect {
            try TransportRulesTests.transfer(method: "GET").following(
                redirect: Self.redirect(status, to: "http://api.example.com/v2"), redirects: 0)
        } throws: { error in
            guard case .insecureRedirect(let url) = error as? CourierError else { return false }
            return url.absoluteString == "http://api.example.com/v2"
        }
    }

    @Test func allowedInsecureRedirectsCarryNoBodyAndNoCredentials() throws {
        let limits = Limits(allowsInsecureRedirects: true)
        // 302 after a POST becomes a GET without the body: followed, without the credentials.
        let next = try #require(
            try TransportRulesTests.transfer(limits: limits).following(
                redirect: Self.redirect(302, to: "http://api.example.com/v2"), redirects: 0))
        #expect(next.request.url?.scheme == "http")
        #expect(next.request.httpBody == nil)
        #expect(next.request.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(next.request.value(forHTTPHeaderField: "Cookie") == nil)
        // 307 would repeat the body over http: refused all the same.
        #expect(throws: CourierError.self) {
            try TransportRulesTests.transfer(limits: limits).following(
                redirect: Self.redirect(307, to: "http://api.example.com/v2"), redirects: 0)
        }
        // http → http and http → https are not insecure hops.
        var plain = TransportRulesTests.transfer()
        plain.request.url = URL(string: "http://api.example.com/v1")
        #expect(
            try plain.following(redirect: Self.redirect(302, to: "https://api.example.com/v2"), redirects: 0) != nil)
    }
}

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

/// What `URLSessionTransport` negotiates with `scripts/test`'s nginx.
@Suite(
    .enabled(
        if: TLSTestServers.isAvailable && TLSTestServers.systemTrustsTestCA,
        "needs scripts/test's TLS servers with the test CA in this process's system bundle"))
struct URLSessionHTTPVersionTests {
    struct Small: TargetType {
        var baseURL: URL
        var path: String { "small.json" }
        var headers: [String: String] { [:] }
        var marker: String
        var task: HTTPTask { .parameters(["m": marker], encoding: .queryString) }
    }

    /// 64 requests at once to one host: how many connections nginx saw (distinct `$connection`).
    static func connections(for provider: Provider<Small>) async throws -> (count: Int, protocols: Set<String>) {
        let batch = UUID().uuidString
        let base = try #require(TLSTestServers.url)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<64 {
                group.addTask {
                    try await provider.request(Small(baseURL: base, marker: "\(batch)-\(index)")).statusCode
                }
            }
            for try await status in group { #expect(status == 200) }
        }
        let lines = TLSTestServers.requests(containing: batch)
        #expect(lines.count == 64)
        let fields = lines.map { $0.split(separator: " ") }
        return (
            Set(fields.compactMap { $0.first }).count, Set(fields.compactMap { $0.dropFirst().first.map(String.init) })
        )
    }

    @Test func http2IsNegotiatedButNotReported() async throws {
        let marker = UUID().uuidString
        let provider = Provider<Small>(transport: URLSessionTransport())
        let response = try await provider.request(Small(baseURL: try #require(TLSTestServers.url), marker: marker))
        #expect(response.statusCode == 200)
        // The server saw HTTP/2 (libcurl with nghttp2, by ALPN); FoundationNetworking does not say.
        let line = try #require(TLSTestServers.requests(containing: marker).first)
        #expect(line.split(separator: " ").dropFirst().first == "HTTP/2.0", "\(line)")
        #if canImport(FoundationNetworking)
            #expect(response.httpVersion == nil)
        #endif
    }

    @Test func concurrentRequestsShareConnections() async throws {
        let provider = Provider<Small>(transport: URLSessionTransport())
        // One request first, so the 64 meet an open HTTP/2 connection instead of starting up to six
        // TLS handshakes at once on FoundationNetworking's one work queue (see above).
        _ = try await provider.request(Small(baseURL: try #require(TLSTestServers.url), marker: UUID().uuidString))
        let seen = try await Self.connections(for: provider)
        print("URLSession: 64 concurrent requests over \(seen.count) connections, \(seen.protocols)")
        #expect(seen.protocols == ["HTTP/2.0"])
        // One when the machine is idle; on a busy one libcurl opens up to its per-host limit (6)
        // before the first connection's ALPN answer says HTTP/2 (seen in the full suite).
        #expect(seen.count <= 6)
    }
}
