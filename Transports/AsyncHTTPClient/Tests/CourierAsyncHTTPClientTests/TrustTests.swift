import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import Foundation
import NIOSSL
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The TLS servers scripts/test starts (a private test CA, a server that requires a client
/// certificate) and the files for them.
struct TLSServers {
    let ca: Data
    let url: URL
    let mtlsURL: URL
    let clientCertificate: Data
    let clientKey: Data
    let clientP12: Data
    let clientP12Password: String
    /// nginx's access log: one line per request it received.
    let accessLog: String

    static let fromEnvironment: TLSServers? = {
        let environment = ProcessInfo.processInfo.environment
        func file(_ name: String) -> Data? { environment[name].flatMap { FileManager.default.contents(atPath: $0) } }
        func address(_ name: String) -> URL? { environment[name].flatMap(URL.init(string:)) }
        guard let ca = file("COURIER_TLS_CA"), let url = address("COURIER_TLS_URL"),
            let mtlsURL = address("COURIER_TLS_MTLS_URL"),
            let clientCertificate = file("COURIER_TLS_CLIENT_CERT"), let clientKey = file("COURIER_TLS_CLIENT_KEY"),
            let clientP12 = file("COURIER_TLS_CLIENT_P12"),
            let password = environment["COURIER_TLS_CLIENT_P12_PASSWORD"],
            let accessLog = environment["COURIER_TLS_ACCESS_LOG"]
        else { return nil }
        return TLSServers(
            ca: ca, url: url, mtlsURL: mtlsURL, clientCertificate: clientCertificate, clientKey: clientKey,
            clientP12: clientP12, clientP12Password: password, accessLog: accessLog)
    }()
}

/// Trust policies on AsyncHTTPClientTransport against real TLS servers on loopback.
@Suite(.enabled(if: TLSServers.fromEnvironment != nil, "needs scripts/test's TLS servers"))
struct TrustTests {
    private let servers = TLSServers.fromEnvironment!

    private func get(_ url: URL, _ path: String, trust: TrustPolicies) async throws -> Response {
        let transport = try AsyncHTTPClientTransport(trust: trust)
        return try await transport.send(URLRequest(url: url.appendingPathComponent(path)))
    }

    /// Expects the request to be refused during the handshake: an error, and no request line at
    /// the server (a marker in the query finds it in nginx's access log).
    private func expectRefused(
        _ url: URL, trust: TrustPolicies, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let marker = UUID().uuidString
        let target = try #require(URL(string: "\(url.absoluteString)/small.json?refused=\(marker)"))
        let transport = try AsyncHTTPClientTransport(trust: trust)
        let error = await #expect(throws: CourierError.self, sourceLocation: sourceLocation) {
            try await transport.send(URLRequest(url: target))
        }
        guard case .serverTrust(let host, let reason, _) = error else {
            Issue.record("not a serverTrust refusal: \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(host == url.host, sourceLocation: sourceLocation)
        #expect(reason == .untrustedIssuer, sourceLocation: sourceLocation)
        let log = (try? String(contentsOfFile: servers.accessLog, encoding: .utf8)) ?? ""
        #expect(!log.contains(marker), "the server received the request", sourceLocation: sourceLocation)
    }

    private var host: String { servers.url.host ?? "" }

    @Test func aPrivateCAIsAcceptedOnlyWhenConfigured() async throws {
        let ca = TrustCertificate.pem(servers.ca)
        // Only the test CA, or the system's roots and the test CA: accepted.
        #expect(
            try await get(servers.url, "small.json", trust: TrustPolicies(default: TrustPolicy(roots: .only([ca]))))
                .statusCode == 200)
        #expect(
            try await get(
                servers.url, "small.json", trust: TrustPolicies(hosts: [host: TrustPolicy(roots: .adding([ca]))])
            ).statusCode == 200)
        // Not configured, or configured for another host only: refused before anything is sent.
        try await expectRefused(servers.url, trust: .system)
        try await expectRefused(
            servers.url, trust: TrustPolicies(hosts: ["other.example": TrustPolicy(roots: .only([ca]))]))
    }

    /// The policy is chosen by the host of each request, redirects included: the server's
    /// certificate names both `localhost` and `127.0.0.1`, and only `localhost` trusts the test CA.
    @Test func thePolicyFollowsTheHostAcrossRedirects() async throws {
        var components = try #require(URLComponents(url: servers.url, resolvingAgainstBaseURL: false))
        #expect(components.host == "localhost")
        let policies = TrustPolicies(hosts: ["LOCALHOST": TrustPolicy(roots: .only([.pem(servers.ca)]))])
        #expect(try await get(servers.url, "small.json", trust: policies).statusCode == 200)
        components.host = "127.0.0.1"
        let byAddress = try #require(components.url)
        try await expectRefused(byAddress, trust: policies)
        // From the trusted host to the other one by a redirect: refused at the second hop.
        let target = byAddress.appendingPathComponent("small.json").absoluteString
        var redirect = try #require(
            URLComponents(
                url: servers.url.appendingPathComponent("httpbin/redirect-to"), resolvingAgainstBaseURL: false))
        redirect.queryItems = [URLQueryItem(name: "url", value: target)]
        let transport = try AsyncHTTPClientTransport(trust: policies)
        let error = await #expect(throws: CourierError.self) {
            try await transport.send(URLRequest(url: try #require(redirect.url)))
        }
        guard case .serverTrust(let host, _, _) = error else {
            Issue.record("not a serverTrust refusal: \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1")
        // With the CA trusted for both hosts, the same redirect is followed.
        let both = TrustPolicies(
            default: TrustPolicy(roots: .only([.pem(servers.ca)])),
            hosts: ["localhost": TrustPolicy(roots: .only([.pem(servers.ca)]))])
        let followed = try await AsyncHTTPClientTransport(trust: both).send(URLRequest(url: try #require(redirect.url)))
        #expect(followed.statusCode == 200)
    }

    @Test func mutualTLSIsAcceptedWithTheIdentityAndRefusedWithout() async throws {
        let roots = TrustPolicy.Roots.only([.pem(servers.ca)])
        let pem = TrustPolicy(
            roots: roots,
            clientIdentity: .pem(certificateChain: servers.clientCertificate, privateKey: servers.clientKey))
        let p12 = TrustPolicy(
            roots: roots, clientIdentity: .pkcs12(servers.clientP12, password: servers.clientP12Password))
        #expect(try await get(servers.mtlsURL, "small.json", trust: TrustPolicies(default: pem)).statusCode == 200)
        #expect(try await get(servers.mtlsURL, "small.json", trust: TrustPolicies(default: p12)).statusCode == 200)
        // nginx completes the handshake without a client certificate and answers 400 ("No
        // required SSL certificate was sent").
        #expect(
            try await get(servers.mtlsURL, "small.json", trust: TrustPolicies(default: TrustPolicy(roots: roots)))
                .statusCode == 400)
        // The identity goes to the host it is configured for only.
        let elsewhere = TrustPolicies(default: TrustPolicy(roots: roots), hosts: ["other.example": p12])
        #expect(try await get(servers.mtlsURL, "small.json", trust: elsewhere).statusCode == 400)
    }
}
