// Courier on both transports next to the raw clients they wrap, each client measured alone.
//
//   TransportBench BASE_URL SCALE PASSES [LABEL]
//
// BASE_URL serves /small.json (a small JSON object) and /one.bin (1 MiB), over http or https.
// Clients: raw URLSession, a second raw URLSession (an A/A control: the same code measured as
// another client), Courier on URLSessionTransport, raw AsyncHTTPClient, a second raw
// AsyncHTTPClient (its A/A control, another HTTPClient with the same configuration), Courier on
// AsyncHTTPClientTransport, and each transport called alone (no provider). TRANSPORT_BENCH_CLIENTS
// picks a subset, TRANSPORT_BENCH_WORKLOADS the workloads. For every workload (small JSON, small
// JSON decoded, 1 MiB) and concurrency (1 and 64 in flight), each pass runs every client alone for
// one block of requests, in an order that rotates every pass and is reversed every other pass. A
// client's figure is the median over passes (min–max beside it); a ratio is computed per pass from
// that pass's blocks, then its median and min–max are reported; so is the CPU per request Courier
// adds (its block's CPU per request minus the raw client's, per pass). CPU per request is
// getrusage (user + system, the whole process) over the block.
//
// HTTPS (an https BASE_URL): AsyncHTTPClient clients (raw, A/A, and the one under Courier's
// transport: the same HTTPClient object, so the same TLS configuration and connection pool) trust
// the CA in COURIER_TLS_CA; the HTTP version is the client's default (HTTP/2 where the server
// offers it by ALPN). URLSession on Linux reads only the system bundle: its clients run only when
// COURIER_TLS_SYSTEM_TRUST is "test-ca" (scripts/support/tls-servers.sh, tls_run_with_test_ca),
// and are skipped with a note otherwise.
//
// The HTTP version each client negotiated is checked once before measuring, by one request
// carrying a marker: from the server's access log (TRANSPORT_BENCH_ACCESS_LOG, nginx lines
// "$connection $server_protocol $request"), which sees what every client did, and from the
// response where the client says (AsyncHTTPClient; FoundationNetworking does not).
//
// Output, one line per figure, tab-separated: NAME COURIER RAW RATIO UNIT (scripts/bench's table),
// then RATIO_MIN RATIO_MAX COURIER_MIN COURIER_MAX RAW_MIN RAW_MAX COURIER_CPU RAW_CPU ADDED_CPU
// ADDED_CPU_MIN ADDED_CPU_MAX COURIER_HTTP RAW_HTTP (for Benchmarks/RESULTS.md). Rates in req/s,
// CPU in µs per request. Notes (negotiated versions, skipped clients) go to standard error.
import AsyncHTTPClient
import BenchmarkSupport
import Courier
import CourierAsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Endpoint: TargetType {
    var baseURL: URL
    var path: String
    var headers: [String: String] { [:] }
    /// A query marker, for the request that checks the HTTP version in the server's log.
    var marker: String?
    var task: HTTPTask {
        guard let marker else { return .plain }
        return .parameters(["bench-probe": marker], encoding: .queryString)
    }
}

struct Item: Decodable, Sendable {
    var id: Int
    var name: String
    var tags: [String]
    var active: Bool
}

enum Client: String, CaseIterable, Sendable {
    case rawURLSession
    case rawURLSessionAA
    /// The transport alone (`send(_:)`, no provider): splits Courier's cost into the transport's
    /// and the pipeline's.
    case transportURLSession
    case courierURLSession
    case rawAHC
    case rawAHCAA
    case transportAHC
    case courierAHC

    var isURLSession: Bool {
        [.rawURLSession, .rawURLSessionAA, .transportURLSession, .courierURLSession].contains(self)
    }

    /// The clients to measure: TRANSPORT_BENCH_CLIENTS (names, comma-separated), or all.
    static var selected: [Client] {
        guard let names = ProcessInfo.processInfo.environment["TRANSPORT_BENCH_CLIENTS"] else { return allCases }
        return names.split(separator: ",").compactMap { Client(rawValue: String($0)) }
    }
}

struct Workload: Sendable {
    let name: String
    let path: String
    let decode: Bool
    /// Requests per block, sequential and 64-way, at SCALE 1.
    let block: (sequential: Int, concurrent: Int)
}

/// What one block measured.
struct Sample {
    var requestsPerSecond: Double
    var cpuMicrosecondsPerRequest: Double
}

func cpuSeconds() -> Double {
    var usage = rusage()
    #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    func value(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return value(usage.ru_utime) + value(usage.ru_stime)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count.isMultiple(of: 2)
        ? (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2 : sorted[sorted.count / 2]
}

func note(_ text: String) { FileHandle.standardError.write(Data("TransportBench: \(text)\n".utf8)) }

@main
enum TransportBench {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard (4...5).contains(arguments.count), let base = URL(string: arguments[1]),
            let scale = Double(arguments[2]), let passes = Int(arguments[3]), passes >= 3
        else {
            note("usage: TransportBench BASE_URL SCALE PASSES(≥3) [LABEL]")
            exit(2)
        }
        let label = arguments.count == 5 ? arguments[4] + "-" : ""
        let environment = ProcessInfo.processInfo.environment
        let https = base.scheme?.lowercased() == "https"

        var clients = Client.selected
        if https, environment["COURIER_TLS_SYSTEM_TRUST"] != "test-ca" {
            // FoundationNetworking trusts only the system bundle (on Apple platforms, the keychain):
            // without the test CA there, every URLSession request would be refused.
            note("\(label)URLSession clients skipped: the test CA is not in the system bundle for this process")
            clients.removeAll(where: \.isURLSession)
        }
        guard !clients.isEmpty else {
            note("no client to measure")
            exit(2)
        }

        // Every AsyncHTTPClient client: the transport's configuration, trusting the test CA over HTTPS.
        var configuration = AsyncHTTPClientTransport.clientConfiguration()
        if https {
            guard let authority = environment["COURIER_TLS_CA"] else {
                note("an https BASE_URL needs COURIER_TLS_CA (the CA that signed the server's certificate)")
                exit(2)
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(authority)
            configuration.tlsConfiguration = tls
        }
        // The raw side and Courier's transport share one client (one connection pool, one TLS
        // configuration); the A/A control has its own, configured the same.
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let clientAA = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let sessionA = URLSession(configuration: URLSessionTransport.defaultConfiguration())
        let sessionB = URLSession(configuration: URLSessionTransport.defaultConfiguration())
        let urlSessionTransport = URLSessionTransport()
        let ahcTransport = AsyncHTTPClientTransport(client: client)
        let onURLSession = Provider<Endpoint>(transport: urlSessionTransport)
        let onAHC = Provider<Endpoint>(transport: ahcTransport)

        /// The URL a raw client or a transport alone asks for: `path` under the base, with the
        /// probe's marker as its query.
        @Sendable func url(_ path: String, marker: String?) -> URL {
            let url = base.appendingPathComponent(path)
            guard let marker, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
                return url
            }
            components.queryItems = [URLQueryItem(name: "bench-probe", value: marker)]
            return components.url ?? url
        }
        /// One request as `which` makes it; returns the HTTP version the client reports, if it does.
        /// `url` is the raw clients' and the transports' (made once per block, before it is timed,
        /// as the cheapest raw client would: built for every request, it was 2 µs of
        /// `appendingPathComponent` on every side, Courier's included, which never read it);
        /// Courier builds its own from `path`, as it does for every request.
        @Sendable func request(
            _ which: Client, url: URL, path: String, decode: Bool, marker: String?
        ) async throws -> String? {
            switch which {
            case .rawURLSession, .rawURLSessionAA:
                let session = which == .rawURLSession ? sessionA : sessionB
                let (data, _) = try await session.data(for: URLRequest(url: url))
                if decode { _ = try JSONDecoder().decode(Item.self, from: data) }
                return nil
            case .transportURLSession, .transportAHC:
                let transport: any Transport = which == .transportURLSession ? urlSessionTransport : ahcTransport
                let response = try await transport.send(URLRequest(url: url))
                if decode { _ = try JSONDecoder().decode(Item.self, from: response.data) }
                return response.httpVersion
            case .courierURLSession, .courierAHC:
                let provider = which == .courierURLSession ? onURLSession : onAHC
                let response = try await provider.request(Endpoint(baseURL: base, path: path, marker: marker))
                if decode { _ = try response.map(Item.self) }
                return response.httpVersion
            case .rawAHC, .rawAHCAA:
                // The same request head Courier's transport sends (its User-Agent and Accept-Encoding).
                var outgoing = HTTPClientRequest(url: url.absoluteString)
                outgoing.headers.add(name: "User-Agent", value: AsyncHTTPClientTransport.defaultUserAgent)
                outgoing.headers.add(name: "Accept-Encoding", value: "gzip, deflate")
                let response = try await (which == .rawAHC ? client : clientAA).execute(outgoing, timeout: .seconds(60))
                let body = try await response.body.collect(upTo: 4 << 20)
                let data = body.withUnsafeReadableBytes { Data($0) }
                if decode { _ = try JSONDecoder().decode(Item.self, from: data) }
                return "\(response.version)"
            }
        }
        func operation(_ which: Client, _ workload: Workload) -> @Sendable () async throws -> Void {
            let path = workload.path
            let decode = workload.decode
            let target = url(path, marker: nil)
            return { _ = try await request(which, url: target, path: path, decode: decode, marker: nil) }
        }

        let only = environment["TRANSPORT_BENCH_WORKLOADS"]?.split(separator: ",").map(String.init)
        let workloads = [
            Workload(name: "small", path: "small.json", decode: false, block: (2000, 8000)),
            Workload(name: "small-decode", path: "small.json", decode: true, block: (2000, 8000)),
            Workload(name: "1mib", path: "one.bin", decode: false, block: (150, 600)),
        ].filter { only?.contains($0.name) ?? true }
        // Warm-up: connections open, code paths hot, for every client.
        for workload in workloads {
            for which in clients { try await concurrently(8, total: 200, operation(which, workload)) }
        }
        // TRANSPORT_BENCH_PROFILE=N[:WORKERS]: each selected client alone, N requests of the first
        // workload, for a profiler (scripts/bench-wire --ahc runs one client per process under perf).
        if let profile = environment["TRANSPORT_BENCH_PROFILE"] {
            let parts = profile.split(separator: ":").compactMap { Int($0) }
            guard let total = parts.first, total > 0, let workload = workloads.first else {
                note("TRANSPORT_BENCH_PROFILE: N[:WORKERS], N > 0")
                exit(2)
            }
            let workers = parts.count > 1 ? max(1, parts[1]) : 1
            for which in clients {
                let cpu = cpuSeconds()
                let start = ContinuousClock.now
                try await concurrently(workers, total: total, operation(which, workload))
                let elapsed = ContinuousClock.now - start
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                let perRequest = (cpuSeconds() - cpu) * 1e6 / Double(total)
                print(
                    "TransportBench profile \(which.rawValue): \(total) requests, \(workers) workers, "
                        + "CPU \(String(format: "%.1f", perRequest)) µs/req, "
                        + "\(String(format: "%.0f", Double(total) / seconds)) req/s")
            }
            return
        }
        // The HTTP version each client negotiated, as the server saw it (and as the client says).
        var versions: [Client: String] = [:]
        let run = UUID().uuidString.prefix(8)
        for which in clients {
            let marker = "\(run)-\(which.rawValue)"
            let reported = try await request(
                which, url: url("small.json", marker: marker), path: "small.json", decode: false, marker: marker)
            // nginx writes the line after the response went out: wait for it a little (1 s at most).
            var seen: String?
            for _ in 0..<20 {
                seen = serverProtocol(containing: marker, log: environment["TRANSPORT_BENCH_ACCESS_LOG"])
                if seen != nil || environment["TRANSPORT_BENCH_ACCESS_LOG"] == nil { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            versions[which] = seen ?? reported.map { "\($0) (client)" } ?? "?"
            note("\(label)\(which.rawValue): server saw \(seen ?? "-"), client says \(reported ?? "-")")
        }

        for workload in workloads {
            for (mode, workers) in [("sequential", 1), ("64-way", 64)] {
                let perBlock = max(
                    20, Int(Double(workers == 1 ? workload.block.sequential : workload.block.concurrent) * scale))
                var samples: [Client: [Sample]] = [:]
                for pass in 0..<passes {
                    var order = clients
                    order = Array(order[(pass % order.count)...] + order[..<(pass % order.count)])
                    if pass.isMultiple(of: 2) == false { order.reverse() }
                    for which in order {
                        let work = operation(which, workload)
                        let cpu = cpuSeconds()
                        let start = ContinuousClock.now
                        try await concurrently(workers, total: perBlock, work)
                        let elapsed = ContinuousClock.now - start
                        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                        samples[which, default: []].append(
                            Sample(
                                requestsPerSecond: Double(perBlock) / seconds,
                                cpuMicrosecondsPerRequest: (cpuSeconds() - cpu) / Double(perBlock) * 1e6))
                    }
                }
                report("\(label)\(workload.name)-\(mode)", samples: samples, versions: versions)
            }
        }
        try await client.shutdown()
        try await clientAA.shutdown()
    }

    /// The protocol (`HTTP/1.1`, `HTTP/2.0`) of the server's log line that contains `marker`.
    static func serverProtocol(containing marker: String, log: String?) -> String? {
        guard let log, let data = FileManager.default.contents(atPath: log) else { return nil }
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last { $0.contains(marker) }
        return line?.split(separator: " ").dropFirst().first.map(String.init)
    }

    /// One line per comparison: the two clients' median req/s, the median per-pass ratio, and in
    /// the unit column the ratio's min–max and each side's median CPU per request; then the same
    /// as separate columns, with the CPU per request the measured client adds (per pass).
    static func report(_ name: String, samples: [Client: [Sample]], versions: [Client: String]) {
        let pairs: [(String, Client, Client)] = [
            ("urlsession", .courierURLSession, .rawURLSession),
            ("ahc", .courierAHC, .rawAHC),
            ("urlsession-transport-only", .transportURLSession, .rawURLSession),
            ("ahc-transport-only", .transportAHC, .rawAHC),
            ("aa-control", .rawURLSessionAA, .rawURLSession),
            ("ahc-aa-control", .rawAHCAA, .rawAHC),
            ("ahc-vs-urlsession-raw", .rawAHC, .rawURLSession),
            ("courier-ahc-vs-urlsession-raw", .courierAHC, .rawURLSession),
        ]
        for (pair, measured, baseline) in pairs {
            guard let a = samples[measured], let b = samples[baseline] else { continue }
            let ratios = zip(a, b).map { $0.requestsPerSecond / $1.requestsPerSecond }
            let added = zip(a, b).map { $0.cpuMicrosecondsPerRequest - $1.cpuMicrosecondsPerRequest }
            let rateA = a.map(\.requestsPerSecond)
            let rateB = b.map(\.requestsPerSecond)
            let cpuA = median(a.map(\.cpuMicrosecondsPerRequest))
            let cpuB = median(b.map(\.cpuMicrosecondsPerRequest))
            let unit = String(
                format: "req/s; ratio %.3f–%.3f; %.0f–%.0f vs %.0f–%.0f req/s; CPU %.1f vs %.1f µs/req",
                ratios.min() ?? 0, ratios.max() ?? 0, rateA.min() ?? 0, rateA.max() ?? 0, rateB.min() ?? 0,
                rateB.max() ?? 0, cpuA, cpuB)
            let columns =
                ["\(pair)-\(name)"]
                + [median(rateA), median(rateB)].map { String(format: "%.0f", $0) }
                + [String(format: "%.3f", median(ratios)), unit]
                + [ratios.min() ?? 0, ratios.max() ?? 0].map { String(format: "%.3f", $0) }
                + [rateA.min() ?? 0, rateA.max() ?? 0, rateB.min() ?? 0, rateB.max() ?? 0].map {
                    String(format: "%.0f", $0)
                }
                + [cpuA, cpuB, median(added), added.min() ?? 0, added.max() ?? 0].map { String(format: "%.1f", $0) }
                + [versions[measured] ?? "?", versions[baseline] ?? "?"]
            print(columns.joined(separator: "\t"))
        }
    }
}
