// Does memory return to baseline after a load? COUNT requests, 64 at a time, through a provider
// (and, as the twin, through a raw URLSession), then everything released; the heap in use is
// compared with what it was before. Heap bytes in use (the allocator's own count) rather than RSS,
// because an allocator keeps freed pages mapped; RSS is printed too, after asking it to trim.
import BenchmarkSupport
@_spi(Testing) import Courier
import Foundation
import HeapStatistics
import PipelineFixtures

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Bytes the allocator has handed out and not had back.
func heapInUse() -> Int { Int(heap_statistics_in_use()) }

/// Resident memory in bytes after returning free pages where the allocator can (0 where unknown).
func residentAfterTrim() -> Int {
    heap_statistics_trim()
    #if os(Linux)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kib * 1_024
    #else
        return 0
    #endif
}

/// Weak hold on an object, to see that it was released.
final class Weak<Object: AnyObject>: @unchecked Sendable {
    // Written once in init, read after; the object is only compared with nil.
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}

/// Waits (bounded: 10 s) until `released` is true; URLSession invalidation finishes asynchronously.
func waitUntilReleased(_ released: () -> Bool) async throws -> Bool {
    for _ in 0..<1_000 {
        if released() { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return released()
}

struct LoadCheckFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs `count` requests, at most 64 at once.
func load(count: Int, _ operation: @escaping @Sendable () async throws -> Void) async throws {
    try await concurrently(64, total: count, operation)
}

/// Sixteen paths, so concurrent requests for the same one join under de-duplication.
struct Item16: TargetType {
    var headers: [String: String] { [:] }
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var index: Int
    var path: String { "items/\(index % 16)" }
}

/// Answers at once in-process; every 20th call with a 503 (so the retry policy runs).
struct InstantTransport: Transport {
    let calls = Counter()
    func send(_ transfer: Transfer) async throws -> Response {
        let status = calls.add(1).isMultiple(of: 20) ? 503 : 200
        return Response(statusCode: status, data: Data(#"{"id":1}"#.utf8), request: transfer.request)
    }
}

extension LoadCheck {
    /// Courier alone, without FoundationNetworking: `count` requests, 64 at a time, through a
    /// provider with plugins, network activity, de-duplication and retries, every tenth cancelled.
    /// Returns the heap growth in bytes once the provider is released.
    static func pipelineHeapGrowth(count: Int) async throws -> Int {
        func run(_ count: Int) async throws -> Weak<Provider<Item16>> {
            let provider = Provider<Item16>(
                transport: InstantTransport(),
                plugins: threePlugins() + [NetworkActivityPlugin()],
                deduplication: .enabled,
                retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: .microseconds(10)))
            let started = Counter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        while case let index = started.add(1), index <= count {
                            let task = Task { _ = try? await provider.request(Item16(index: index)) }
                            if index.isMultiple(of: 10) { task.cancel() }
                            await task.value
                        }
                    }
                }
                try await group.waitForAll()
            }
            guard await provider.inflightCount == 0 else { throw LoadCheckFailure("requests left in flight") }
            return Weak(provider)
        }
        _ = try await run(2_000)  // one-time costs
        let before = heapInUse()
        let watch = try await run(count)
        guard try await waitUntilReleased({ watch.object == nil }) else {
            throw LoadCheckFailure("the provider was not released")
        }
        return heapInUse() - before
    }

    /// Prints the pipeline's heap growth after `count` requests (see ``pipelineHeapGrowth(count:)``).
    static func heap(count: Int) async throws {
        let growth = try await pipelineHeapGrowth(count: count)
        line("heap-growth-pipeline-after-\(count)", Double(growth) / 1_024, nil, "KiB", format: "%.1f")
        line("heap-growth-pipeline-per-request", Double(growth) / Double(count), nil, "bytes", format: "%.2f")
    }

    /// Real requests: a provider (then a raw URLSession) loaded with `count` requests, 64 at a
    /// time, then released. Fails if the provider, its transport or its session is not released.
    static func memory(base: URL, count: Int) async throws {
        let target = Small(baseURL: base)
        let url = base.appendingPathComponent("small.json")

        // Pay the one-time costs first (libcurl's global state, Foundation caches, type metadata,
        // the cooperative pool's threads), then release everything.
        do {
            let provider = Provider<Small>(transport: URLSessionTransport())
            let raw = URLSession(configuration: URLSessionTransport.defaultConfiguration())
            try await load(count: 1_000) { _ = try await provider.request(target) }
            try await load(count: 1_000) { _ = try await raw.data(from: url) }
            raw.finishTasksAndInvalidate()
        }
        try await Task.sleep(for: .milliseconds(200))

        let courierBefore = heapInUse()
        guard courierBefore > 0 else { throw LoadCheckFailure("no heap statistics on this platform") }
        // Held weakly outside the scope that owns them: a local may live until its scope ends.
        let courierWatch: (Weak<Provider<Small>>, Weak<URLSessionTransport>, Weak<URLSession>)
        do {
            let transport = URLSessionTransport()
            let provider = Provider<Small>(transport: transport)
            courierWatch = (Weak(provider), Weak(transport), Weak(transport.session))
            try await load(count: count) { _ = try await provider.request(target) }
            guard await provider.inflightCount == 0 else { throw LoadCheckFailure("requests left in flight") }
        }
        guard try await waitUntilReleased({ courierWatch.0.object == nil && courierWatch.1.object == nil }) else {
            throw LoadCheckFailure("the provider or its transport was not released")
        }
        guard try await waitUntilReleased({ courierWatch.2.object == nil }) else {
            throw LoadCheckFailure("the transport's URLSession was not released")
        }
        let courierGrowth = heapInUse() - courierBefore

        let rawBefore = heapInUse()
        let rawWatch: Weak<URLSession>
        do {
            let raw = URLSession(configuration: URLSessionTransport.defaultConfiguration())
            rawWatch = Weak(raw)
            try await load(count: count) { _ = try await raw.data(from: url) }
            raw.finishTasksAndInvalidate()
        }
        guard try await waitUntilReleased({ rawWatch.object == nil }) else {
            throw LoadCheckFailure("the raw URLSession was not released")
        }
        let rawGrowth = heapInUse() - rawBefore

        line(
            "heap-growth-http-after-\(count)", Double(courierGrowth) / 1_024, Double(rawGrowth) / 1_024, "KiB",
            format: "%.1f")
        line(
            "heap-growth-http-per-request", Double(courierGrowth) / Double(count), Double(rawGrowth) / Double(count),
            "bytes", format: "%.1f")
        line("rss-after-trim", Double(residentAfterTrim()) / 1_048_576, nil, "MiB", format: "%.1f")
    }
}
