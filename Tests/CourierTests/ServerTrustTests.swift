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
