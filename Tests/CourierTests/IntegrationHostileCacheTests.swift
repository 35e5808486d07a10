import Courier
import CourierTesting
import CourierTransportConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a test's cache keeps responses, and how many it holds.
enum CacheUnderTest: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case disk

    var testDescription: String { rawValue }

    /// Small limits, so that a hostile body crosses the entry limit quickly.
    static let limits = CacheLimits(maxTotalBytes: 8 << 20, maxEntryBytes: 1 << 20)

    /// A new storage (a disk one in a new temporary folder) and a way to count what it holds.
    func make(limits: CacheLimits = limits) throws -> Storage {
        switch self {
        case .memory:
            return Storage(storage: MemoryCacheStorage(limits: limits), folder: nil)
        case .disk:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "courier-hostile-cache-\(UUID().uuidString)")
            return Storage(storage: try DiskCacheStorage(folder: folder, limits: limits), folder: folder)
        }
    }

    struct Storage: Sendable {
        let storage: any CacheStorage
        let folder: URL?

        /// How many responses are stored, and their bytes (disk: the files' sizes).
        func contents() async -> (count: Int, bytes: Int) {
            if let memory = storage as? MemoryCacheStorage { return (await memory.count, await memory.totalBytes) }
            guard let folder else { return (0, 0) }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            var bytes = 0
            for name in names {
                let attributes = try? FileManager.default.attributesOfItem(
                    atPath: folder.appendingPathComponent(name).path)
                bytes += (attributes?[.size] as? Int) ?? 0
            }
            return (names.count, bytes)
        }

        func remove() {
            if let folder { try? FileManager.default.removeItem(at: folder) }
        }
    }
}

/// The cache against scripts/fault_server.py's `/cache` routes, which send huge, malformed and
/// contradictory cache headers over a real socket: every request ends (a response or a typed
/// error) within the deadline, the storage holds only what it may, within its limits, and 304s
/// are merged. The server counts what reached it (`/cache-count`).
@Suite(.enabled(if: FaultServer.isAvailable, "needs COURIER_FAULT_URL (run scripts/test)"), .timeLimit(.minutes(3)))
struct IntegrationHostileCacheTests {
    struct Counts: Decodable, Equatable {
        var requests: Int
        var conditional: Int
        var notModified: Int
    }

    private func counts(_ id: String) async throws -> Counts {
        try await Provider<Fault>().request(Fault(path: "cache-count?id=\(id)", timeout: .seconds(30)))
            .map(Counts.self)
    }

    /// The response, or `nil` when the request failed with a typed error (a transport may refuse
    /// a 1 MiB header line).
    private func fetch(_ provider: Provider<Fault>, _ kind: String, id: String, query: String = "") async -> Response? {
        do throws(CourierError) {
            return try await provider.request(Fault(path: "cache?kind=\(kind)&id=\(id)\(query)", timeout: .seconds(60)))
        } catch {
            return nil
        }
    }

    static let notStored: [(kind: String, query: String)] = [
        ("directives", ""), ("huge-line", ""), ("late-no-store", ""), ("contradicting", ""), ("vary-star", ""),
        ("vary-many", ""), ("vary-late-star", ""), ("big", "&n=\(3 << 20)"), ("big-chunked", "&n=\(3 << 20)"),
        ("big", "&n=\((1 << 20) + 1)"),
    ]

    @Test(arguments: CacheUnderTest.allCases)
    func hostileHeadersAndBodiesAreNeverStored(_ under: CacheUnderTest) async throws {
        let storage = try under.make()
        defer { storage.remove() }
        let provider = Provider<Fault>(cache: HTTPCache(storage: storage.storage))
        for (kind, query) in Self.notStored {
            let id = UUID().uuidString
            let first = await fetch(provider, kind, id: id, query: query)
            let second = await fetch(provider, kind, id: id, query: query)
            if kind != "huge-line" {
                #expect(first?.cacheStatus == .network, "\(kind)\(query)")
                #expect(second?.cacheStatus == .network, "\(kind)\(query)")
            }
            #expect(first == nil || first?.cacheStatus == .network, "\(kind)\(query)")
            #expect(second == nil || second?.cacheStatus == .network, "\(kind)\(query)")
            // Both reached the server: nothing answered from the cache.
            #expect(try await counts(id).requests == 2, "\(kind)\(query)")
            #expect(await storage.contents().count == 0, "\(kind)\(query) was stored")
        }
    }

    static let staleAtOnce = ["negative", "garbage-dates", "huge-age"]

    /// Stored, but stale at once: the next request revalidates, and the server's 304 gives back
    /// the stored body.
    @Test(arguments: CacheUnderTest.allCases)
    func malformedFreshnessIsStaleAndRevalidatedWithA304(_ under: CacheUnderTest) async throws {
        let storage = try under.make()
        defer { storage.remove() }
        let provider = Provider<Fault>(cache: HTTPCache(storage: storage.storage))
        for (index, kind) in Self.staleAtOnce.enumerated() {
            let id = UUID().uuidString
            let first = try #require(await fetch(provider, kind, id: id), "\(kind)")
            let second = try #require(await fetch(provider, kind, id: id), "\(kind)")
            #expect(first.cacheStatus == .network, "\(kind)")
            #expect(second.cacheStatus == .revalidated, "\(kind)")
            #expect(second.statusCode == 200, "\(kind)")
            #expect(second.data == first.data, "\(kind)")
            #expect(second.request?.value(forHTTPHeaderField: "If-None-Match") == "\"\(kind)\"", "\(kind)")
            #expect(try await counts(id) == Counts(requests: 2, conditional: 1, notModified: 1), "\(kind)")
            #expect(await storage.contents().count == index + 1, "\(kind)")
        }
    }

    /// `max-age=99999999999999999999` is read as "for ever" (capped), not an overflow.
    @Test(arguments: CacheUnderTest.allCases)
    func anOverflowingMaxAgeIsFreshNotACrash(_ under: CacheUnderTest) async throws {
        let storage = try under.make()
        defer { storage.remove() }
        let provider = Provider<Fault>(cache: HTTPCache(storage: storage.storage))
        let id = UUID().uuidString
        let first = try #require(await fetch(provider, "overflow", id: id))
        let second = try #require(await fetch(provider, "overflow", id: id))
        #expect(first.cacheStatus == .network)
        #expect(second.cacheStatus == .hit)
        #expect(second.data == first.data)
        #expect(try await counts(id).requests == 1)
        #expect(await storage.contents().count == 1)
    }

    /// An ETag that changes every time: never a 304, each response replaces the last (one entry,
    /// the newest ETag), and every later request is conditional.
    @Test(arguments: CacheUnderTest.allCases)
    func anETagThatChangesEveryTimeReplacesTheEntry(_ under: CacheUnderTest) async throws {
        let storage = try under.make()
        defer { storage.remove() }
        let cache = HTTPCache(storage: storage.storage)
        let provider = Provider<Fault>(cache: cache)
        let id = UUID().uuidString
        var last: Response?
        for _ in 0..<5 {
            let response = try #require(await fetch(provider, "etag-changing", id: id))
            #expect(response.cacheStatus == .network)
            last = response
        }
        #expect(try await counts(id) == Counts(requests: 5, conditional: 4, notModified: 0))
        #expect(await storage.contents().count == 1)
        let url = try #require(last?.request?.url)
        let stored = await cache.storedResponse(for: url)
        #expect(stored?.headers.first { $0.key.lowercased() == "etag" }?.value == "\"etag-changing-5\"")
    }

    /// Many bodies just under the entry limit: the storage evicts and stays within its total.
    @Test(arguments: CacheUnderTest.allCases)
    func bodiesUnderTheEntryLimitStayWithinTheTotal(_ under: CacheUnderTest) async throws {
        let limits = CacheLimits(maxTotalBytes: 3 << 20, maxEntryBytes: 1 << 20)
        let storage = try under.make(limits: limits)
        defer { storage.remove() }
        let provider = Provider<Fault>(cache: HTTPCache(storage: storage.storage))
        for round in 0..<8 {
            let response = await fetch(provider, "big", id: UUID().uuidString, query: "&n=\(900 << 10)&r=\(round)")
            #expect(response?.cacheStatus == .network)
            let contents = await storage.contents()
            #expect(contents.bytes <= limits.maxTotalBytes, "round \(round): \(contents)")
        }
        #expect(await storage.contents().count >= 1)
    }
}
