// The stubbed-request loop of scripts/stub-ab, built once against each Courier being compared.
// Prints CPU microseconds per request (getrusage) and requests per second, for one run.
import Courier
import Foundation

struct Small: TargetType {
    var headers: [String: String] { [:] }
    var baseURL: URL
    var path: String { "small.json" }
    var sampleData: Data { Data(#"{"id":1,"name":"courier","tags":["a","b"],"active":true}"#.utf8) }
}

func cpuMicroseconds() -> Double {
    var usage = rusage()
    #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    let seconds = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    return seconds * 1e6 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}

let iterations = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 50_000
let provider = Provider<Small>(STUB_ARGUMENT: Provider.immediatelyStub)
let target = Small(baseURL: URL(string: "https://api.example.com")!)
for _ in 0..<2_000 { _ = try await provider.request(target) }
let before = cpuMicroseconds()
let start = ContinuousClock.now
for _ in 0..<iterations { _ = try await provider.request(target) }
let wall = ContinuousClock.now - start
let cpu = cpuMicroseconds() - before
let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
print(String(format: "%.3f %.0f", cpu / Double(iterations), Double(iterations) / seconds))
