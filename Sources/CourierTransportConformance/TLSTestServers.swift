import Foundation

/// `scripts/test`'s TLS servers (nginx on loopback, certificates from a throwaway test CA), as
/// its `COURIER_TLS_*` variables name them; `scripts/test`'s header lists them all.
public enum TLSTestServers {
    private static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The test CA's certificate (PEM), `COURIER_TLS_CA`.
    public static var certificateAuthority: String? { environment["COURIER_TLS_CA"] }

    /// The valid server (`COURIER_TLS_URL`): HTTP/1.1 and HTTP/2, `/small.json`, `/1m.bin`,
    /// httpbin under `/httpbin/` (request bodies read whole first) and `/unbuffered/` (request
    /// bodies passed on as they arrive, so httpbin may answer first), `/to-http/PATH` (302) and
    /// `/to-http-307/PATH` (307) to httpbin over plain HTTP.
    public static var url: URL? { url("COURIER_TLS_URL") }

    /// The server named by environment variable `name`, such as `COURIER_TLS_EXPIRED_URL`.
    public static func url(_ name: String) -> URL? { environment[name].flatMap(URL.init(string:)) }

    /// Whether the servers are there.
    public static var isAvailable: Bool { url != nil && environment["COURIER_TLS_ACCESS_LOG"] != nil }

    /// Whether this process's system trust store holds the test CA: `scripts/test` runs the root
    /// package's tests with it added there (in a private mount namespace), since
    /// FoundationNetworking reads no other.
    public static var systemTrustsTestCA: Bool { environment["COURIER_TLS_SYSTEM_TRUST"] == "test-ca" }

    /// The TLS servers' access log lines containing `marker`: `"$connection $server_protocol
    /// $request"`, such as `"12 HTTP/2.0 GET /small.json?m=… HTTP/2.0"`.
    public static func requests(containing marker: String) -> [String] {
        lines(of: environment["COURIER_TLS_ACCESS_LOG"], containing: marker)
    }

    /// httpbin's access log lines (plain HTTP) containing `marker`.
    public static func cleartextRequests(containing marker: String) -> [String] {
        lines(of: environment["COURIER_HTTPBIN_ACCESS_LOG"], containing: marker)
    }

    /// The TLS servers' log lines containing `marker`, once there are at least `count` of them
    /// (or what there is after `seconds`). nginx writes a request's line after its response has
    /// gone out, so a client that reads the log as soon as it has its answer can be ahead of it.
    public static func requests(containing marker: String, atLeast count: Int, seconds: Double = 10) async -> [String] {
        await waiting(atLeast: count, seconds: seconds) { requests(containing: marker) }
    }

    /// httpbin's log lines containing `marker`, once there are at least `count` of them (or what
    /// there is after `seconds`).
    public static func cleartextRequests(
        containing marker: String, atLeast count: Int, seconds: Double = 10
    ) async -> [String] {
        await waiting(atLeast: count, seconds: seconds) { cleartextRequests(containing: marker) }
    }

    /// Reads `lines` until it has `count` lines, every 20 ms, for `seconds` at most.
    private static func waiting(atLeast count: Int, seconds: Double, _ lines: () -> [String]) async -> [String] {
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int(seconds * 1000))
        while true {
            let found = lines()
            if found.count >= count || clock.now >= end { return found }
            try? await clock.sleep(for: .milliseconds(20))
        }
    }

    private static func lines(of path: String?, containing marker: String) -> [String] {
        guard let path, let data = FileManager.default.contents(atPath: path) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").filter { $0.contains(marker) }.map(
            String.init)
    }
}
