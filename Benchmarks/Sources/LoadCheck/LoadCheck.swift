// Courier's cost next to raw URLSession, measured in the same process and run.
//
//   LoadCheck stub ITERATIONS
//   LoadCheck http BASE_URL ITERATIONS          (BASE_URL serves /small.json)
//   LoadCheck dedup COUNT
//   LoadCheck cancel BASE_URL COUNT             (BASE_URL serves /delay/MS)
//
// Each line printed: FIGURE COURIER RAW UNIT (RAW is "-" where there is no raw twin).
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Small: TargetType {
    var baseURL: URL
    var path: String { "small.json" }
    var sampleData: Data { Data(#"{"id":1,"name":"courier","tags":["a","b"],"active":true}"#.utf8) }
}

struct Item: Decodable, Sendable {
    var id: Int
    var name: String
    var tags: [String]
    var active: Bool
}

/// Three plugins that do what real ones do: add a header, observe, pass the result through.
struct HeaderPlugin: Plugin {
    func prepare(_ request: URLRequest, target: any TargetType) async throws -> URLRequest {
        var request = request
        request.setValue("Bearer token", forHTTPHeaderField: "Authorization")
        return request
    }
}

final class CountingPlugin: Plugin {
    let sent = Counter()
    func willSend(_ request: URLRequest, target: any TargetType) async { sent.increment() }
    func didReceive(_ result: Result<Response, CourierError>, target: any TargetType) async { sent.increment() }
}

struct PassThroughPlugin: Plugin {
    func process(_ result: Result<Response, CourierError>, target: any TargetType) async -> Result<Response, CourierError> {
        result
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.lock(); value += 1; lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return value }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func measure(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    return seconds(ContinuousClock.now - start)
}

/// Runs `courier` and `raw` in alternating rounds (so drift on the machine hits both alike) and
/// returns each side's throughput and the median of the per-round ratios.
func paired(
    rounds: Int, workers: Int, iterations: Int,
    courier: @escaping @Sendable () async throws -> Void, raw: @escaping @Sendable () async throws -> Void
) async throws -> (courier: Double, raw: Double, ratio: Double) {
    var ratios: [Double] = []
    var courierTotal = 0.0
    var rawTotal = 0.0
    for round in 0..<rounds {
        // Alternate which side goes first.
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

/// Concurrent workers sharing `total` operations.
func concurrently(_ workers: Int, total: Int, _ operation: @escaping @Sendable () async throws -> Void) async throws {
    let next = Counter()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<workers {
            group.addTask {
                while true {
                    next.increment()
                    if next.count > total { return }
                    try await operation()
                }
            }
        }
        try await group.waitForAll()
    }
}

@main
struct LoadCheck {
    static func main() async {
        do {
            try await run(Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("LoadCheck: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(_ arguments: [String]) async throws {
        switch arguments.first {
        case "stub":
            try await stub(iterations: Int(arguments[1]) ?? 100_000)
        case "transport":
            try await transportOnly(base: URL(string: arguments[1])!, iterations: Int(arguments[2]) ?? 2_000)
        case "only-raw", "only-provider", "only-transport":
            let base = URL(string: arguments[1])!
            let iterations = Int(arguments[2]) ?? 5_000
            let raw = URLSession(configuration: URLSessionTransport.defaultConfiguration())
            let transport = URLSessionTransport()
            let provider = Provider<Small>(transport: transport)
            let target = Small(baseURL: base)
            let request = URLRequest(url: base.appendingPathComponent("small.json"))
            let mode = arguments[0]
            let elapsed = try await measure {
                for _ in 0..<iterations {
                    switch mode {
                    case "only-raw": _ = try await raw.data(for: request)
                    case "only-transport": _ = try await transport.send(request)
                    default: _ = try await provider.request(target)
                    }
                }
            }
            print(mode, String(format: "%.0f req/s", Double(iterations) / elapsed))
        case "aa":
            let base = URL(string: arguments[1])!
            let iterations = Int(arguments[2]) ?? 1_500
            let raw = URLSession(configuration: URLSessionTransport.defaultConfiguration())
            let raw2 = URLSession(configuration: URLSessionTransport.defaultConfiguration())
            let request = URLRequest(url: base.appendingPathComponent("small.json"))
            for _ in 0..<300 {
                _ = try await raw.data(for: request)
                _ = try await raw2.data(for: request)
            }
            for workers in [1, 64] {
                let a = try await paired(rounds: 7, workers: workers, iterations: iterations,
                    courier: { _ = try await raw2.data(for: request) }, raw: { _ = try await raw.data(for: request) })
                print("raw2/raw \(workers)-way", a.ratio)
                let b = try await paired(rounds: 7, workers: workers, iterations: iterations,
                    courier: {
                        var fresh = URLRequest(url: base.appendingPathComponent("small.json"))
                        fresh.httpMethod = "GET"
                        _ = try await raw2.data(for: fresh)
                    }, raw: { _ = try await raw.data(for: request) })
                print("raw-fresh/raw \(workers)-way", b.ratio)
            }
        case "three":
            let base = URL(string: arguments[1])!
            let iterations = Int(arguments[2]) ?? 1_500
            let raw = URLSession(configuration: URLSessionTransport.defaultConfiguration())
            let transport = URLSessionTransport()
            let provider = Provider<Small>(transport: transport)
            let target = Small(baseURL: base)
            let request = URLRequest(url: base.appendingPathComponent("small.json"))
            for _ in 0..<300 {
                _ = try await raw.data(for: request)
                _ = try await provider.request(target)
            }
            let a = try await paired(rounds: 7, workers: 1, iterations: iterations,
                courier: { _ = try await transport.send(request) }, raw: { _ = try await raw.data(for: request) })
            let b = try await paired(rounds: 7, workers: 1, iterations: iterations,
                courier: { _ = try await provider.request(target) }, raw: { _ = try await raw.data(for: request) })
            let c = try await paired(rounds: 7, workers: 1, iterations: iterations,
                courier: { _ = try await provider.request(target) }, raw: { _ = try await transport.send(request) })
            print("transport/raw", a.ratio, "provider/raw", b.ratio, "provider/transport", c.ratio)
        case "http":
            try await http(base: URL(string: arguments[1])!, iterations: Int(arguments[2]) ?? 2_000)
        default:
            print("usage: LoadCheck stub N | http BASE N")
        }
    }

    static func stub(iterations: Int) async throws {
        let target = Small(baseURL: URL(string: "https://api.example.com")!)
        for (label, plugins) in [("stub-0-plugins", [any Plugin]()), ("stub-3-plugins", [HeaderPlugin(), CountingPlugin(), PassThroughPlugin()])] {
            let provider = Provider<Small>(stubBehavior: Provider.immediatelyStub, plugins: plugins)
            for _ in 0..<1_000 { _ = try await provider.request(target) }
            let elapsed = try await measure {
                for _ in 0..<iterations { _ = try await provider.request(target) }
            }
            print(label, String(format: "%.0f", Double(iterations) / elapsed), "-", "req/s")
        }
    }

    /// The transport alone, no provider: where the per-request cost of the transport shows.
    static func transportOnly(base: URL, iterations: Int) async throws {
        let raw = URLSession(configuration: URLSessionTransport.defaultConfiguration())
        let transport = URLSessionTransport()
        let request = URLRequest(url: base.appendingPathComponent("small.json"))
        for _ in 0..<200 {
            _ = try await raw.data(for: request)
            _ = try await transport.send(request)
        }
        for workers in [1, 64] {
            let result = try await paired(
                rounds: 7, workers: workers, iterations: iterations,
                courier: { _ = try await transport.send(request) },
                raw: { _ = try await raw.data(for: request) })
            print("transport-\(workers)-way", String(format: "%.0f %.0f %.3f", result.courier, result.raw, result.ratio))
        }
    }

    static func http(base: URL, iterations: Int) async throws {
        let raw = URLSession(configuration: URLSessionTransport.defaultConfiguration())
        let provider = Provider<Small>(transport: URLSessionTransport())
        let target = Small(baseURL: base)
        let request = URLRequest(url: base.appendingPathComponent("small.json"))
        for _ in 0..<200 {
            _ = try await raw.data(for: request)
            _ = try await provider.request(target)
        }
        for (label, workers) in [("http-sequential", 1), ("http-64-way", 64)] {
            for decode in [false, true] {
                let result = try await paired(
                    rounds: 7, workers: workers, iterations: iterations,
                    courier: {
                        let response = try await provider.request(target)
                        if decode { _ = try response.map(Item.self) }
                    },
                    raw: {
                        // Built per call, as an app does (the provider builds its request per call).
                        var request = URLRequest(url: base.appendingPathComponent("small.json"))
                        request.httpMethod = "GET"
                        let (data, _) = try await raw.data(for: request)
                        if decode { _ = try JSONDecoder().decode(Item.self, from: data) }
                    })
                print(label + (decode ? "-decode" : ""), String(format: "%.0f %.0f %.3f", result.courier, result.raw, result.ratio))
            }
        }
    }
}
