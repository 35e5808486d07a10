// Requests on the wire, one client at a time, for a profiler (perf) or a quick CPU reading:
// `WireLoop CLIENT N URL [WORKERS]` makes N GET requests to URL (after 200 warm-up requests) with
// CLIENT — `raw` (`URLSession.data(for:)`, Courier's session configuration), `transport`
// (`URLSessionTransport.send`) or `courier` (a `Provider` on that transport) — from WORKERS tasks
// (default 1), and prints CPU (user + system) and wall time per request. scripts/bench-wire runs
// it for each client and prints where the difference goes.
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Fetch: TargetType {
    let url: URL
    var baseURL: URL { url }
    var path: String { "" }
    var headers: [String: String] { [:] }
}

func cpuMicroseconds() -> Double {
    var usage = rusage()
    #if canImport(Darwin)
        getrusage(RUSAGE_SELF, &usage)
    #else
        getrusage(RUSAGE_SELF.rawValue, &usage)
    #endif
    let user = Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec)
    let system = Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec)
    return user + system
}

@main
enum WireLoop {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 4, let count = Int(arguments[2]), let url = URL(string: arguments[3]) else {
            print("usage: WireLoop raw|transport|courier N URL [WORKERS]")
            exit(2)
        }
        let workers = arguments.count > 4 ? Int(arguments[4]) ?? 1 : 1
        let client = arguments[1]
        let session = URLSession(configuration: URLSessionTransport.defaultConfiguration())
        let transport = URLSessionTransport()
        let provider = Provider<Fetch>(transport: transport)
        let target = Fetch(url: url)
        let one: @Sendable () async throws -> Int
        switch client {
        case "raw": one = { try await session.data(for: URLRequest(url: url)).0.count }
        case "transport": one = { try await transport.send(URLRequest(url: url)).data.count }
        case "courier": one = { try await provider.request(target).data.count }
        default:
            print("WireLoop: unknown client \(client)")
            exit(2)
        }
        for _ in 0..<200 { _ = try await one() }
        let cpu = cpuMicroseconds()
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<workers {
                let share = count / workers + (worker < count % workers ? 1 : 0)
                group.addTask {
                    var bytes = 0
                    for _ in 0..<share { bytes &+= try await one() }
                    return bytes
                }
            }
            for try await _ in group {}
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let perRequest = (cpuMicroseconds() - cpu) / Double(count)
        print(
            "WireLoop \(client): \(count) requests, \(workers) workers, "
                + "CPU \(String(format: "%.1f", perRequest)) µs/req, "
                + "\(String(format: "%.0f", Double(count) / seconds)) req/s")
    }
}
