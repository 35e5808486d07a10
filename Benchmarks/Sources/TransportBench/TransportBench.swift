// Courier on both transports next to the raw clients they wrap, each client measured alone.
//
//   TransportBench BASE_URL SCALE PASSES
//
// BASE_URL serves /small.json (a small JSON object) and /one.bin (1 MiB). Clients: raw URLSession,
// a second raw URLSession (the A/A control: the same code measured as another client), Courier on
// URLSessionTransport, raw AsyncHTTPClient, Courier on AsyncHTTPClientTransport, and each
// transport called alone (no provider; TRANSPORT_BENCH_CLIENTS picks a subset). For every
// workload (small JSON, small JSON decoded, 1 MiB) and concurrency (1 and 64 in flight), each pass
// runs every client alone for one block of requests, in an order that rotates every pass and is
// reversed every other pass. A client's figure is the median over passes (min–max beside it); a
// ratio is computed per pass from that pass's blocks, then its median and min–max are reported.
// CPU per request is getrusage (user + system, the whole process) over the block.
//
// Output, one line per figure: NAME<TAB>COURIER<TAB>RAW<TAB>RATIO<TAB>UNIT (scripts/bench).
import AsyncHTTPClient
import BenchmarkSupport
import Courier
import CourierAsyncHTTPClient
import Foundation
import NIOCore

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
    case transportAHC
    case courierAHC

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

@main
enum TransportBench {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 4, let base = URL(string: arguments[1]), let scale = Double(arguments[2]),
            let passes = Int(arguments[3]), passes >= 3
        else {
            FileHandle.standardError.write(Data("usage: TransportBench BASE_URL SCALE PASSES(≥3)\n".utf8))
            exit(2)
        }
        let sessionA = URLSession(configuration: URLSessionTransport.defaultConfiguration())
        let sessionB = URLSession(configuration: URLSessionTransport.defaultConfiguration())
        let urlSessionTransport = URLSessionTransport()
        let ahcTransport = AsyncHTTPClientTransport()
        let onURLSession = Provider<Endpoint>(transport: urlSessionTransport)
        let onAHC = Provider<Endpoint>(transport: ahcTransport)
        // The raw side uses the same client (and so the same connection pool) as the transport.
        let client = AsyncHTTPClientTransport.sharedClient

        func operation(_ which: Client, _ workload: Workload) -> @Sendable () async throws -> Void {
            let url = base.appendingPathComponent(workload.path)
            let target = Endpoint(baseURL: base, path: workload.path)
            let decode = workload.decode
            switch which {
            case .rawURLSession, .rawURLSessionAA:
                let session = which == .rawURLSession ? sessionA : sessionB
                return {
                    let (data, _) = try await session.data(for: URLRequest(url: url))
                    if decode { _ = try JSONDecoder().decode(Item.self, from: data) }
                }
            case .transportURLSession, .transportAHC:
                let transport: any Transport = which == .transportURLSession ? urlSessionTransport : ahcTransport
                return {
                    let response = try await transport.send(URLRequest(url: url))
                    if decode { _ = try JSONDecoder().decode(Item.self, from: response.data) }
                }
            case .courierURLSession, .courierAHC:
                let provider = which == .courierURLSession ? onURLSession : onAHC
                return {
                    let response = try await provider.request(target)
                    if decode { _ = try response.map(Item.self) }
                }
            case .rawAHC:
                return {
                    let response = try await client.execute(
                        HTTPClientRequest(url: url.absoluteString), timeout: .seconds(60))
                    let body = try await response.body.collect(upTo: 4 << 20)
                    let data = body.withUnsafeReadableBytes { Data($0) }
                    if decode { _ = try JSONDecoder().decode(Item.self, from: data) }
                }
            }
        }

        let only = ProcessInfo.processInfo.environment["TRANSPORT_BENCH_WORKLOADS"]?.split(separator: ",").map(
            String.init)
        let workloads = [
            Workload(name: "small", path: "small.json", decode: false, block: (2000, 8000)),
            Workload(name: "small-decode", path: "small.json", decode: true, block: (2000, 8000)),
            Workload(name: "1mib", path: "one.bin", decode: false, block: (150, 600)),
        ].filter { only?.contains($0.name) ?? true }
        // Warm-up: connections open, code paths hot, for every client.
        for workload in workloads {
            for which in Client.selected { try await concurrently(8, total: 200, operation(which, workload)) }
        }

        for workload in workloads {
            for (mode, workers) in [("sequential", 1), ("64-way", 64)] {
                let perBlock = max(
                    20, Int(Double(workers == 1 ? workload.block.sequential : workload.block.concurrent) * scale))
                var samples: [Client: [Sample]] = [:]
                for pass in 0..<passes {
                    var order = Client.selected
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
                report("\(workload.name)-\(mode)", samples: samples)
            }
        }
    }

    /// One line per comparison: the two clients' median req/s, the median per-pass ratio, and in
    /// the unit column the ratio's min–max and each side's median CPU per request.
    static func report(_ name: String, samples: [Client: [Sample]]) {
        let pairs: [(String, Client, Client)] = [
            ("urlsession", .courierURLSession, .rawURLSession),
            ("ahc", .courierAHC, .rawAHC),
            ("urlsession-transport-only", .transportURLSession, .rawURLSession),
            ("ahc-transport-only", .transportAHC, .rawAHC),
            ("aa-control", .rawURLSessionAA, .rawURLSession),
            ("ahc-vs-urlsession-raw", .rawAHC, .rawURLSession),
            ("courier-ahc-vs-urlsession-raw", .courierAHC, .rawURLSession),
        ]
        for (label, measured, baseline) in pairs {
            guard let a = samples[measured], let b = samples[baseline] else { continue }
            let ratios = zip(a, b).map { $0.requestsPerSecond / $1.requestsPerSecond }
            let rateA = a.map(\.requestsPerSecond)
            let rateB = b.map(\.requestsPerSecond)
            let unit = String(
                format: "req/s; ratio %.3f–%.3f; %.0f–%.0f vs %.0f–%.0f req/s; CPU %.1f vs %.1f µs/req",
                ratios.min() ?? 0, ratios.max() ?? 0, rateA.min() ?? 0, rateA.max() ?? 0, rateB.min() ?? 0,
                rateB.max() ?? 0, median(a.map(\.cpuMicrosecondsPerRequest)),
                median(b.map(\.cpuMicrosecondsPerRequest)))
            print(
                [
                    "\(label)-\(name)", String(format: "%.0f", median(rateA)), String(format: "%.0f", median(rateB)),
                    String(format: "%.3f", median(ratios)), unit,
                ]
                .joined(separator: "\t"))
        }
    }
}
