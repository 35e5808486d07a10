// Courier's cost next to raw URLSession, measured in the same process and run.
//
//   LoadCheck stub ITERATIONS              stubbed requests per second, 0 and 3 plugins (median of 5, min, max)
//   LoadCheck dedup COUNT                  COUNT identical requests in flight against a gated transport
//   LoadCheck cancel BASE_URL COUNT        Task.cancel() to thrown error, waiting on BASE_URL/delay/MS (both transports)
//   LoadCheck memory BASE_URL COUNT        heap growth after COUNT real requests, all released (Memory.swift)
//   LoadCheck heap COUNT                   heap growth after COUNT in-process requests through the pipeline
//   LoadCheck stream BASE_URL BYTES ROUNDS streaming BASE_URL/stream.bin (BYTES long), Courier and raw (Streaming.swift)
//   LoadCheck streamclose FAULT_URL COUNT  reader leaves a stream → the server sees the close, both transports (Streaming.swift)
//
// BASE_URL serves /small.json (memory) or /delay/MS (cancel). Throughput against raw clients is
// TransportBench's. Each figure is one line:
// NAME<TAB>COURIER<TAB>RAW<TAB>RATIO<TAB>UNIT, with "-" where there is no raw twin.
import AsyncHTTPClient
import BenchmarkSupport
import Courier
import CourierAsyncHTTPClient
import CourierTesting
import Foundation
import PipelineFixtures

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

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func line(_ name: String, _ courier: Double, _ raw: Double?, _ unit: String, format: String = "%.0f") {
    let rawText = raw.map { String(format: format, $0) } ?? "-"
    let ratio = raw.map { String(format: "%.3f", $0 == 0 ? 0 : courier / $0) } ?? "-"
    print([name, String(format: format, courier), rawText, ratio, unit].joined(separator: "\t"))
}

func measure(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    return seconds(ContinuousClock.now - start)
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
                let fault = try baseURL(arguments[1])
                let count = Int(arguments[2]) ?? 100
                try await Streaming.closeLatency(
                    fault: fault, count: count, transport: URLSessionTransport(), label: "stream-close")
                try await Streaming.closeLatency(
                    fault: fault, count: count, transport: AsyncHTTPClientTransport(), label: "stream-close-ahc")
            case "heap" where arguments.count == 2:
                try await heap(count: Int(arguments[1]) ?? 1_000_000)
            default:
                print(
                    "usage: LoadCheck stub N | dedup N | cancel BASE N | memory BASE N | heap N | stream BASE BYTES ROUNDS | streamclose FAULT N"
                )
                exit(2)
            }
        } catch {
            FileHandle.standardError.write(Data("LoadCheck: \(error)\n".utf8))
            exit(1)
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
        try await cancelLatencies(label: "cancel", count: count) {
            _ = try await provider.request(Slow(baseURL: base))
        } raw: {
            _ = try await raw.data(for: URLRequest(url: base.appendingPathComponent("delay/10000")))
        }
        // The same on AsyncHTTPClientTransport, next to raw AsyncHTTPClient on the same client.
        let ahcProvider = Provider<Slow>(transport: AsyncHTTPClientTransport())
        let client = AsyncHTTPClientTransport.sharedClient
        let url = base.appendingPathComponent("delay/10000").absoluteString
        try await cancelLatencies(label: "cancel-ahc", count: count) {
            _ = try await ahcProvider.request(Slow(baseURL: base))
        } raw: {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
            _ = try await response.body.collect(upTo: 1 << 20)
        }
    }

    /// Cancel-to-return latency, `count` times each: a request through Courier, then the same
    /// request on the raw client, each cancelled once it has reached the server and waits there.
    static func cancelLatencies(
        label: String, count: Int, courier: @escaping @Sendable () async throws -> Void,
        raw: @escaping @Sendable () async throws -> Void
    ) async throws {
        func latency(_ request: @escaping @Sendable () async throws -> Void) async throws -> Double {
            let task = Task { try await request() }
            // Let the request reach the server and wait there.
            try await Task.sleep(for: .milliseconds(3))
            let started = ContinuousClock.now
            task.cancel()
            _ = await task.result
            return seconds(ContinuousClock.now - started) * 1_000
        }
        var courierLatencies: [Double] = []
        var rawLatencies: [Double] = []
        for _ in 0..<count {
            courierLatencies.append(try await latency(courier))
            rawLatencies.append(try await latency(raw))
        }
        courierLatencies.sort()
        rawLatencies.sort()
        line("\(label)-p50", percentile(courierLatencies, 0.5), percentile(rawLatencies, 0.5), "ms", format: "%.3f")
        line("\(label)-p99", percentile(courierLatencies, 0.99), percentile(rawLatencies, 0.99), "ms", format: "%.3f")
    }
}
