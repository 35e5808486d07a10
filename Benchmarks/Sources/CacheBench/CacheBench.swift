// The HTTP cache against a loopback nginx (started by scripts/bench-cache): a fresh hit (memory
// and disk storage) next to the same request over the network, a revalidation answered 304, each
// measured alone in rotating blocks over several passes; then peak memory (getrusage's maxrss)
// while a disk cache with a 1 GiB budget is filled with 4 MiB responses and read back.
//
//   CacheBench BASE_URL [--passes N] [--requests N] [--fill N] [--folder PATH]
//
// nginx serves /fresh.json (max-age=3600), /revalidate.json (no-cache) and /4m.bin (max-age=3600).
import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Failure: Error, CustomStringConvertible {
    let description: String
}

struct Endpoint: TargetType {
    var base: URL
    var path: String
    var method: HTTPMethod = .get
    var task: HTTPTask = .plain
    var headers: [String: String] = [:]
    var cachePolicy: CachePolicy = .protocolRules
    var baseURL: URL { base }
}

/// The peak resident set size so far, in MiB (Linux reports KiB, Darwin bytes).
func peakResidentMiB() throws -> Double {
    var usage = rusage()
    #if canImport(Darwin)
        let who = RUSAGE_SELF
    #else
        let who = RUSAGE_SELF.rawValue
    #endif
    guard getrusage(who, &usage) == 0 else { throw Failure(description: "getrusage failed (errno \(errno))") }
    #if canImport(Darwin)
        return Double(usage.ru_maxrss) / 1_048_576
    #else
        return Double(usage.ru_maxrss) / 1_024
    #endif
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func format(_ values: [Double], digits: Int = 1) -> String {
    let spec = "%.\(digits)f"
    return String(format: spec, median(values)) + " (" + String(format: spec, values.min() ?? 0) + "–"
        + String(format: spec, values.max() ?? 0) + ")"
}

/// Microseconds per request for `count` sequential requests, checking each answer's cache status.
func measure(
    _ provider: Provider<Endpoint>, _ target: Endpoint, count: Int, expecting status: CacheStatus
) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<count {
        let response = try await provider.request(target)
        guard response.cacheStatus == status, response.statusCode == 200 else {
            throw Failure(description: "\(target.path): \(response.cacheStatus), \(response.statusCode), not \(status)")
        }
    }
    let elapsed = clock.now - start
    let (seconds, attoseconds) = elapsed.components
    return (Double(seconds) * 1e6 + Double(attoseconds) / 1e12) / Double(count)
}

func run() async throws {
    var arguments = Array(CommandLine.arguments.dropFirst())
    guard let first = arguments.first, let base = URL(string: first) else {
        throw Failure(description: "usage: CacheBench BASE_URL [--passes N] [--requests N] [--fill N] [--folder PATH]")
    }
    arguments.removeFirst()
    var options: [String: String] = [:]
    while arguments.count >= 2 {
        options[arguments[0]] = arguments[1]
        arguments.removeFirst(2)
    }
    let passes = Int(options["--passes"] ?? "") ?? 5
    let requests = Int(options["--requests"] ?? "") ?? 1000
    let fill = Int(options["--fill"] ?? "") ?? 256
    let folder = URL(fileURLWithPath: options["--folder"] ?? NSTemporaryDirectory())
        .appendingPathComponent("courier-cache-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }

    if options["--control"] == "network" {
        // The control: the same 4 MiB requests without a cache, for the transport's own peak.
        let before = try peakResidentMiB()
        let plain = Provider<Endpoint>()
        for index in 0..<fill {
            let response = try await plain.request(Endpoint(base: base, path: "4m.bin?i=\(index)"))
            guard response.data.count == 4 << 20 else { throw Failure(description: "control \(index)") }
        }
        let after = try peakResidentMiB()
        print(
            "| control: \(fill) × 4 MiB, no cache | peak RSS \(String(format: "%.1f", before)) → \(String(format: "%.1f", after)) MiB |"
        )
        return
    }
    // Peak memory, first, in a fresh process: a 1 GiB disk budget filled with `fill` responses of 4 MiB, then read back.
    let before = try peakResidentMiB()
    let limits = CacheLimits(
        maxTotalBytes: 1 << 30, maxEntryBytes: (4 << 20) + (64 << 10), maxEntries: 10_000)
    let storage = try DiskCacheStorage(folder: folder.appendingPathComponent("fill"), limits: limits)
    let filler = Provider<Endpoint>(cache: HTTPCache(storage: storage))
    let clock = ContinuousClock()
    let fillStart = clock.now
    for index in 0..<fill {
        let response = try await filler.request(Endpoint(base: base, path: "4m.bin?i=\(index)"))
        guard response.cacheStatus == .network, response.data.count == 4 << 20 else {
            throw Failure(description: "fill \(index): \(response.cacheStatus), \(response.data.count) bytes")
        }
    }
    let fillTime = clock.now - fillStart
    let afterFill = try peakResidentMiB()
    let files = try FileManager.default.contentsOfDirectory(atPath: storage.folder.path)
    var stored = 0
    for name in files {
        let size =
            try FileManager.default.attributesOfItem(atPath: storage.folder.appendingPathComponent(name).path)[
                .size] as? Int
        stored += size ?? 0
    }
    let readStart = clock.now
    // 256 × 4 MiB plus each entry's URL and headers is a little over 1 GiB: the oldest are evicted.
    var hits = 0
    var evicted: [Int] = []
    for index in 0..<fill {
        do {
            let response = try await filler.request(
                Endpoint(base: base, path: "4m.bin?i=\(index)", cachePolicy: .cacheOnly))
            guard response.cacheStatus == .hit, response.data.count == 4 << 20 else {
                throw Failure(description: "read back \(index): \(response.cacheStatus), \(response.data.count) bytes")
            }
            hits += 1
        } catch let error as CourierError {
            guard case .underlying(let underlying, _) = error, underlying is HTTPCacheMiss else { throw error }
            evicted.append(index)
        }
    }
    let readTime = clock.now - readStart
    let afterRead = try peakResidentMiB()
    print("| disk cache, 1 GiB budget, \(fill) × 4 MiB | value |")
    print("|---|---|")
    print("| files, bytes on disk | \(files.count), \(String(format: "%.1f", Double(stored) / 1_048_576)) MiB |")
    print("| fill time, read-back time | \(fillTime), \(readTime) |")
    print("| read back: hits, evicted (least recently used) | \(hits), \(evicted.count) \(evicted.prefix(8)) |")
    print("| peak RSS before fill | \(String(format: "%.1f", before)) MiB |")
    print("| peak RSS after fill | \(String(format: "%.1f", afterFill)) MiB |")
    print("| peak RSS after read-back | \(String(format: "%.1f", afterRead)) MiB |")
    let verdict = afterRead <= 64 ? "within" : "OVER"
    print("| target: peak ≤ 64 MiB | \(verdict) |")
    print("")
    // Latency: one provider per row, each warmed up (and its cache filled) before the passes.
    let fresh = Endpoint(base: base, path: "fresh.json")
    let network = Provider<Endpoint>()
    let memoryHit = Provider<Endpoint>(cache: HTTPCache(storage: MemoryCacheStorage()))
    let diskHit = Provider<Endpoint>(
        cache: HTTPCache(storage: try DiskCacheStorage(folder: folder.appendingPathComponent("latency"))))
    // No heuristic freshness: every request after the first is revalidated, and nginx answers 304.
    let revalidating = Provider<Endpoint>(
        cache: HTTPCache(storage: MemoryCacheStorage(), heuristicFreshnessCap: .zero))
    let stale = Endpoint(base: base, path: "revalidate.json")
    typealias Row = (name: String, provider: Provider<Endpoint>, target: Endpoint, status: CacheStatus)
    let rows: [Row] = [
        ("network (no cache)", network, fresh, .network),
        ("fresh hit, memory", memoryHit, fresh, .hit),
        ("fresh hit, disk", diskHit, fresh, .hit),
        ("revalidation (304)", revalidating, stale, .revalidated),
    ]
    for row in rows {
        _ = try await row.provider.request(row.target)
        _ = try await measure(row.provider, row.target, count: 50, expecting: row.status)
    }
    var results: [String: [Double]] = [:]
    for pass in 0..<passes {
        // Rotating blocks: each pass starts with another row, so drift over the run is shared.
        for offset in 0..<rows.count {
            let row = rows[(pass + offset) % rows.count]
            results[row.name, default: []].append(
                try await measure(row.provider, row.target, count: requests, expecting: row.status))
        }
    }
    print("| figure | µs per request, median (min–max) over \(passes) passes of \(requests) |")
    print("|---|---|")
    for row in rows { print("| \(row.name) | \(format(results[row.name] ?? [])) |") }
    let networkTimes = results[rows[0].name] ?? []
    for row in rows.dropFirst() {
        let times = results[row.name] ?? []
        let ratios = zip(networkTimes, times).map { $0 / $1 }
        print("| network ÷ \(row.name) (same pass) | \(format(ratios, digits: 2))× |")
    }
    if afterRead > 64 { throw Failure(description: "peak RSS \(afterRead) MiB is over 64 MiB") }
}

@main
enum CacheBench {
    static func main() async {
        do {
            try await run()
        } catch {
            FileHandle.standardError.write(Data("CacheBench: \(error)\n".utf8))
            exit(1)
        }
    }
}
