import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The servers the conformance checks talk to, on loopback: an
/// [httpbin](https://github.com/postmanlabs/httpbin) and Courier's fault server
/// (`scripts/fault_server.py`), as `scripts/test` starts them, over HTTP (``fromEnvironment``) or
/// behind its TLS server (``tlsFromEnvironment``).
public struct ConformanceServers: Sendable {
    /// The httpbin server's base URL.
    public var httpbin: URL
    /// The fault server's base URL.
    public var fault: URL

    /// Names the servers.
    public init(httpbin: URL, fault: URL) {
        self.httpbin = httpbin
        self.fault = fault
    }

    /// The servers named by `COURIER_HTTPBIN_URL` and `COURIER_FAULT_URL` (set by
    /// `scripts/test`), or `nil` when either is missing.
    public static var fromEnvironment: ConformanceServers? {
        let environment = ProcessInfo.processInfo.environment
        guard let httpbin = environment["COURIER_HTTPBIN_URL"].flatMap(URL.init(string:)),
            let fault = environment["COURIER_FAULT_URL"].flatMap(URL.init(string:))
        else { return nil }
        return ConformanceServers(httpbin: httpbin, fault: fault)
    }

    /// The same servers behind `scripts/test`'s TLS server (nginx, HTTP/1.1 and HTTP/2 by ALPN, a
    /// certificate from the test CA in `COURIER_TLS_CA`): httpbin at `COURIER_TLS_URL/httpbin`,
    /// the fault server at `COURIER_TLS_FAULT_URL`. `nil` when either is missing. Run
    /// ``TransportConformance/httpsChecks`` against them, on a transport that trusts the test CA.
    public static var tlsFromEnvironment: ConformanceServers? {
        let environment = ProcessInfo.processInfo.environment
        guard let tls = environment["COURIER_TLS_URL"].flatMap(URL.init(string:)),
            let fault = environment["COURIER_TLS_FAULT_URL"].flatMap(URL.init(string:))
        else { return nil }
        return ConformanceServers(httpbin: tls.appendingPathComponent("httpbin"), fault: fault)
    }
}

/// The behaviour every Courier `Transport` must have, as checks any transport can run:
/// requests and bodies, uploads from files and downloads to files, progress, redirects by
/// Courier's rules, limits and decompression, streamed responses, cancellation and deadlines,
/// hostile server responses, cookies, compressed request bodies. `URLSessionTransport` and `AsyncHTTPClientTransport` both
/// pass it; a transport of your own should too.
///
/// Run it from a test target as one parameterized Swift Testing test, against the servers
/// `scripts/test` starts:
///
/// ```swift
/// import CourierTransportConformance
/// import Testing
///
/// @Suite(.enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"))
/// struct MyTransportConformance {
///     @Test(arguments: TransportConformance.checks)
///     func conforms(_ check: TransportConformance.Check) async throws {
///         try await check.run(on: MyTransport(), servers: #require(ConformanceServers.fromEnvironment))
///     }
/// }
/// ```
///
/// Each check makes its own `Provider` on the transport, records failures through
/// Swift Testing (`#expect`), and removes every file it made.
public enum TransportConformance: Sendable {
    /// One check of the suite.
    public struct Check: Sendable, CustomTestStringConvertible {
        /// What it checks, as the test case's name.
        public let name: String
        /// Whether the check means something behind a TLS server (a proxy): not when it needs
        /// malformed HTTP from the fault server, which the proxy would repair or refuse.
        let overTLS: Bool
        let body: @Sendable (Context) async throws -> Void

        init(_ name: String, overTLS: Bool = true, _ body: @escaping @Sendable (Context) async throws -> Void) {
            self.name = name
            self.overTLS = overTLS
            self.body = body
        }

        public var testDescription: String { name }

        /// Runs the check on `transport`.
        /// - Parameters:
        ///   - transport: The transport under test.
        ///   - servers: The servers to talk to.
        public func run(on transport: any Transport, servers: ConformanceServers) async throws {
            try await body(Context(transport: transport, servers: servers))
        }
    }

    /// Every check.
    public static var checks: [Check] {
        requestChecks + transferChecks + redirectChecks + limitChecks + streamChecks + cancellationChecks
            + faultChecks + compressionChecks
    }

    /// The checks to run over HTTPS, against ``ConformanceServers/tlsFromEnvironment``: all of
    /// ``checks`` but the ones that need the fault server's malformed or hostile answers (broken
    /// responses, bodies cut short, hostile lengths, bytes past `Content-Length`, a download cut
    /// off by a reset, a flood of header fields), which only plain HTTP can deliver as sent. Bodies, files, progress, streams, cancellation, deadlines, limits,
    /// decompression and redirects all run over TLS, HTTP/2 where the transport negotiates it
    /// (`AsyncHTTPClientTransport` sends requests with a body over HTTP/1.1: see its documentation).
    /// Then checks of TLS itself (``TLSTestServers``): refused certificates (expired, for another
    /// host, self-signed, unknown authority) are `CourierError.serverTrust`
    /// and the server sees no request; `https` → `http` redirects are refused
    /// (`Limits.allowsInsecureRedirects`); the HTTP version reported is the one the
    /// server saw; 64 concurrent requests share connections.
    public static var httpsChecks: [Check] {
        checks.filter(\.overTLS) + tlsChecks
    }
}

/// What a check works with.
struct Context: Sendable {
    let transport: any Transport
    let servers: ConformanceServers

    /// A provider on the transport under test.
    func provider(limits: Limits = .default) -> Provider<Conformance> {
        Provider<Conformance>(transport: transport, limits: limits)
    }

    /// A target on the httpbin server.
    func bin(
        _ path: String, method: HTTPMethod = .get, task: HTTPTask = .plain, headers: [String: String] = [:],
        timeout: Duration = Conformance.hangGuard
    ) -> Conformance {
        Conformance(
            baseURL: servers.httpbin, path: path, method: method, task: task, headers: headers, timeout: timeout)
    }

    /// The same target on the fault server.
    func fault(
        _ path: String, method: HTTPMethod = .get, task: HTTPTask = .plain, headers: [String: String] = [:],
        timeout: Duration = Conformance.hangGuard
    ) -> Conformance {
        var target = bin(path, method: method, task: task, headers: headers, timeout: timeout)
        target.baseURL = servers.fault
        return target
    }
}

/// The conformance checks' target: any path on either server.
struct Conformance: TargetType {
    var baseURL: URL
    var path: String
    var method: HTTPMethod = .get
    var task: HTTPTask = .plain
    var headers: [String: String] = [:]
    var timeout: Duration? = Conformance.hangGuard
    var requestCompression: RequestCompression?  // compressed uploads

    /// The deadline of a check's requests, unless the check is about deadlines: a guard that
    /// turns a hang into a failure, not a speed target. Generous, because every check of every
    /// suite runs at once: on 2 loaded cores a plain GET waited more than 60 s behind the others
    /// (FoundationNetworking runs all its sessions on one work queue).
    static let hangGuard: Duration = .seconds(300)
}

/// A folder of the check's own, removed with everything in it (it made all of it).
struct ScratchFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "CourierConformance-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    /// A file of `size` bytes of printable text, made here.
    func file(named name: String, size: Int) throws -> URL {
        let file = url.appendingPathComponent(name)
        let pattern = Array("0123456789abcdefghijklmnopqrstuvwxyz\n".utf8)
        var data = Data(capacity: size)
        while data.count < size { data.append(contentsOf: pattern.prefix(size - data.count)) }
        try data.write(to: file)
        return file
    }

    var contents: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
    }
}

/// httpbin's echo of a request.
struct Echo: Decodable {
    var method: String?
    var data: String?
    var headers: [String: String]
    var args: [String: String]?
    var form: [String: String]?
    var files: [String: String]?
    var url: String?
}

/// The fault server's echo of a request (`/echo`).
struct FaultEcho: Decodable {
    var method: String
    var body: String
    var headers: [String: String]
}
