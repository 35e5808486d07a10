// Courier's cost next to raw URLSession, measured in the same process and run.
//
//   LoadCheck http BASE_URL ITERATIONS     throughput, sequential and 64-way, with and without decoding
//   LoadCheck aa BASE_URL ITERATIONS       raw against raw through the same harness (its noise)
//   LoadCheck stub ITERATIONS              stubbed requests per second, 0 and 3 plugins (median of 5, min, max)
//   LoadCheck dedup COUNT                  COUNT identical requests in flight against a gated transport
//   LoadCheck cancel BASE_URL COUNT        Task.cancel() to thrown error, waiting on BASE_URL/delay/MS
//   LoadCheck memory BASE_URL COUNT        heap growth after COUNT real requests, all released (Memory.swift)
//   LoadCheck heap COUNT                   heap growth after COUNT in-process requests through the pipeline
//   LoadCheck stream BASE_URL BYTES ROUNDS streaming BASE_URL/stream.bin (BYTES long), Courier and raw (Streaming.swift)
//   LoadCheck streamclose FAULT_URL COUNT  reader leaves a stream → the server sees the close (Streaming.swift)
//
// BASE_URL serves /small.json (http) or /delay/MS (cancel). Each figure is one line:
// NAME<TAB>COURIER<TAB>RAW<TAB>RATIO<TAB>UNIT, with "-" where there is no raw twin.
import BenchmarkSupport
import Courier
import CourierTesting
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Small: TargetType {
    var headers: [String: String] { [:] }
    var baseURL: URL
    var path: String { "small.json" }
    var sampleData: Data { Data(#"{"id":1,"name":"courier","tags":["a","b"],"active":true}"#.utf8) }
}

struct Slow: TargetType {
    var headers: [String: String] { [:] }
    var baseURL: URL
    var path: String { "delay/10000" }
}

struct Item: Decodable, Sendable {
    var id: Int
    var name: String
    var tags: [String]
    var active: Bool
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func measure(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    return seconds(ContinuousClock.now - start)
}

func line(_ name: String, _ courier: Double, _ raw: Double?, _ unit: String, format: String = "%.0f") {
    let rawText = raw.map { String(format: format, $0) } ?? "-"
    let ratio = raw.map { String(format: "%.3f", $0 == 0 ? 0 : courier / $0) } ?? "-"
    print([name, String(format: format, courier), rawText, ratio, unit].joined(separator: "\t"))
}

/// `workers` concurrent loops sharing `total` operations.
func concurrently(_ workers: Int, total: Int, _ operation: @escaping @Sendable () async throws -> Void) async throws {
    let started = Counter()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<workers {
            group.addTask {
                while started.add(1) <= total { try await operation() }
            }
        }
        try await group.waitForAll()
    }
}

/// Runs both sides in alternating rounds (so drift on the machine hits both alike); returns each
/// side's throughput and the median of the per-round ratios.
func paired(
    rounds: Int, workers: Int, iterations: Int,
    courier: @escaping @Sendable () async throws -> Void, raw: @escaping @Sendable () async throws -> Void
) async throws -> (courier: Double, raw: Double, ratio: Double) {
    var ratios: [Double] = []
    var courierTotal = 0.0
    var rawTotal = 0.0
    for round in 0..<rounds {
        var courierTime = 0.0
        var rawTime = 0.0
        if round.isMultiple(of: 2) {
            rawTime = try await measure { try await concurrently(workers, total: iterations, raw) }
            courierTime = try await measure { try await concurrently(workers, total: iterations, courier) }
        } else {
            courierTime = try await measure { try await concurrently(workers, total: iterations, courier) }
            rawTime = try await measure { try await concurrently(workers, total: iterations, raw) }
        }
        courierTotal += courierTime
        rawTotal += rawTime
        ratios.append(rawTime / courierTime)
    }
    ratios.sort()
    let count = Double(rounds * iterations)
    return (count / courierTotal, count / rawTotal, ratios[ratios.count / 2])
}

/// `workers` concurrent loops, each alternating one raw and one Courier request (which goes first
/// flips every time) and timing each. Both sides see the same machine at the same moments, so
/// drift cancels out. Returns each side's throughput (requests over the time spent in them, per
/// worker) and the ratio of the total time spent in raw requests to that spent in Courier's.
func interleaved(
    workers: Int, iterations: Int,
    courier: @escaping @Sendable () async throws -> Void, raw: @escaping @Sendable () async throws -> Void
) async throws -> (courier: Double, raw: Double, ratio: Double) {
    let started = Counter()
    let totals = try await withThrowingTaskGroup(of: (Double, Double).self) { group in
        for _ in 0..<workers {
            group.addTask {
                var courierTime = 0.0
                var rawTime = 0.0
                var courierFirst = false
                while started.add(1) <= iterations {
                    courierFirst.toggle()
                    for side in courierFirst ? [true, false] : [false, true] {
                        let start = ContinuousClock.now
                        if side { try await courier() } else { try await raw() }
                        let elapsed = seconds(ContinuousClock.now - start)
                        if side { courierTime += elapsed } else { rawTime += elapsed }
                    }
                }
                return (courierTime, rawTime)
            }
        }
        var sum = (0.0, 0.0)
        for try await (courierTime, rawTime) in group {
            sum.0 += courierTime
            sum.1 += rawTime
        }
        return sum
    }
    let perWorker = Double(workers)
    return (
        Double(iterations) / (totals.0 / perWorker), Double(iterations) / (totals.1 / perWorker), totals.1 / totals.0
    )
}

/// The base URL argument, or a clear failure.
func baseURL(_ text: String) throws -> URL {
    guard let url = URL(string: text), url.scheme != nil else { throw LoadCheckFailure("not a URL: \(text)") }
    return url
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

@main
struct LoadCheck {
    static func main() async {
        do {
            let arguments = Array(CommandLine.arguments.dropFirst())
            switch arguments.first {
            case "http" where arguments.count == 3:
                try await http(base: try baseURL(arguments[1]), iterations: Int(arguments[2]) ?? 1_500)
            case "aa" where arguments.count == 3:
                try await aa(base: try baseURL(arguments[1]), iterations: Int(arguments[2]) ?? 1_500)
            case "stub" where arguments.count == 2:
                try await stub(iterations: Int(arguments[1]) ?? 200_000)
            case "dedup" where arguments.count == 2:
                try await dedup(count: Int(arguments[1]) ?? 10_000)
            case "cancel" where arguments.count == 3:
                try await cancel(base: try baseURL(arguments[1]), count: Int(arguments[2]) ?? 1_000)
            case "memory" where arguments.count == 3:
                try await memory(base: try baseURL(arguments[1]), count: Int(arguments[2]) ?? 10_000)
            case "stream" where arguments.count == 4:
                try await Streaming.throughput(
                    base: try baseURL(arguments[1]), bytes: Int64(arguments[2]) ?? 0, rounds: Int(arguments[3]) ?? 3,
                    transfers: 4)
            case "streamclose" where arguments.count == 3:
                try await Streaming.closeLatency(fault: try baseURL(arguments[1]), count: Int(arguments[2]) ?? 100)
            case "heap" where arguments.count == 2:
                try await heap(count: Int(arguments[1]) ?? 1_000_000)
            default:
                print(
                    "usage: LoadCheck http BASE N | aa BASE N | stub N | dedup N | cancel BASE N | memory BASE N | heap N"
                )
                exit(2)
            }
        } catch {
            FileHandle.standardError.write(Data("LoadCheck: \(error)\n".utf8))
            exit(1)
        }
    }

    static func http(base: URL, iterations: Int) async throws {
        // The same session configuration on both sides.
        let raw = URLSession(configuration: URLSessionTransport.defaultConfiguration())
        let provider = Provider<Small>(
            transport: URLSessionTransport(configuration: URLSessionTransport.defaultConfiguration()))
        let target = Small(baseURL: base)
        for _ in 0..<300 {
            _ = try await raw.data(for: URLRequest(url: base.appendingPathComponent("small.json")))
            _ = try await provider.request(target)
        }
        for (label, workers) in [("http-sequential", 1), ("http-64-way", 64)] {
            for decode in [false, true] {
                let result = try await interleaved(
                    workers: workers, iterations: iterations,
                    courier: {
                        let response = try await provider.request(target)
                        if decode { _ = try response.map(Item.self) }
                    },
                    raw: {
                        // Built per call, as an app does; the provider builds its request per call too.
                        var request = URLRequest(url: base.appendingPathComponent("small.json"))
                        request.httpMethod = "GET"
                        let (data, _) = try await raw.data(for: request)
                        if decode { _ = try JSONDecoder().decode(Item.self, from: data) }
                    })
                print(
                    [
                        label + (decode ? "-decode" : ""), String(format: "%.0f", result.courier),
                        String(format: "%.0f", result.raw), String(format: "%.3f", result.ratio), "req/s",
                    ]
                    .joined(separator: "\t"))
            }
        }
    }

    /// Two raw sessions against each other: how far from 1 the harness puts equal code.
    static func aa(base: URL, iterations: Int) async throws {
        let first = URLSession(configuration: URLSessionTransport.defaultConfiguration())
        let second = URLSession(configuration: URLSessionTransport.defaultConfiguration())
        let url = base.appendingPathComponent("small.json")
        for _ in 0..<300 {
            _ = try await first.data(for: URLRequest(url: url))
            _ = try await second.data(for: URLRequest(url: url))
        }
        for (label, workers) in [("raw-vs-raw-sequential", 1), ("raw-vs-raw-64-way", 64)] {
            let result = try await interleaved(
                workers: workers, iterations: iterations,
                courier: { _ = try await second.data(for: URLRequest(url: url)) },
                raw: { _ = try await first.data(for: URLRequest(url: url)) })
            print(
                [
                    label, String(format: "%.0f", result.courier), String(format: "%.0f", result.raw),
                    String(format: "%.3f", result.ratio), "req/s",
                ].joined(separator: "\t"))
        }
    }

    static func stub(iterations: Int) async throws {
        let target = Small(baseURL: URL(string: "https://api.example.com")!)
        let configurations: [(String, [any Plugin])] = [
            ("stub-0-plugins", []),
            ("stub-3-plugins", threePlugins()),
        ]
        for (label, plugins) in configurations {
            let provider = Provider<Small>(stubClosure: Provider.immediatelyStub, plugins: plugins)
            for _ in 0..<2_000 { _ = try await provider.request(target) }
            // Five runs: the median is the figure (never the best run), min and max show the spread.
            var rates: [Double] = []
            for _ in 0..<5 {
                let elapsed = try await measure {
                    for _ in 0..<iterations { _ = try await provider.request(target) }
                }
                rates.append(Double(iterations) / elapsed)
            }
            rates.sort()
            line(label, rates[rates.count / 2], nil, "req/s")
            line(label + "-min", rates[0], nil, "req/s")
            line(label + "-max", rates[rates.count - 1], nil, "req/s")
        }
    }

    static func dedup(count: Int) async throws {
        let transport = GatedTransport()
        let provider = Provider<Small>(transport: transport, deduplication: .enabled)
        let target = Small(baseURL: URL(string: "https://api.example.com")!)
        let answered = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    _ = try await provider.request(target)
                    answered.add(1)
                }
            }
            while await provider.inflightWaiterCount < count { await Task.yield() }
            await transport.waitForRequests(1)
            let released = ContinuousClock.now
            transport.release()
            try await group.waitForAll()
            let elapsed = seconds(ContinuousClock.now - released)
            line("dedup-transport-calls", Double(transport.calls), nil, "calls")
            line("dedup-release-to-last", elapsed * 1_000, nil, "ms", format: "%.2f")
        }
        guard answered.count == count else { throw LoadCheckFailure("only \(answered.count) of \(count) answered") }
    }

    static func cancel(base: URL, count: Int) async throws {
        let raw = URLSession(configuration: URLSessionTransport.defaultConfiguration())
        let provider = Provider<Slow>(transport: URLSessionTransport())
        var courierLatencies: [Double] = []
        var rawLatencies: [Double] = []
        for _ in 0..<count {
            let courierTask = Task { try await provider.request(Slow(baseURL: base)) }
            // Let the request reach the server and wait there.
            try await Task.sleep(for: .milliseconds(3))
            var started = ContinuousClock.now
            courierTask.cancel()
            _ = await courierTask.result
            courierLatencies.append(seconds(ContinuousClock.now - started) * 1_000)

            let rawTask = Task { try await raw.data(for: URLRequest(url: base.appendingPathComponent("delay/10000"))) }
            try await Task.sleep(for: .milliseconds(3))
            started = ContinuousClock.now
            rawTask.cancel()
            _ = await rawTask.result
            rawLatencies.append(seconds(ContinuousClock.now - started) * 1_000)
        }
        courierLatencies.sort()
        rawLatencies.sort()
        line("cancel-p50", percentile(courierLatencies, 0.5), percentile(rawLatencies, 0.5), "ms", format: "%.3f")
        line("cancel-p99", percentile(courierLatencies, 0.99), percentile(rawLatencies, 0.99), "ms", format: "%.3f")
    }
}
