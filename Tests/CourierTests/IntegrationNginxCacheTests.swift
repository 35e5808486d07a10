import Courier
import CourierTesting
import CourierTransportConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Static files on the loopback nginx (`scripts/test`'s TLS servers) carry real `ETag` and
/// `Last-Modified`: with heuristic freshness off, every later request is revalidated and nginx
/// answers 304 — counted on the wire in nginx's access log.
@Suite(
    .enabled(
        if: TLSTestServers.isAvailable && TLSTestServers.systemTrustsTestCA,
        "needs scripts/test's nginx and its test CA in the system trust store"),
    .timeLimit(.minutes(2)))
struct IntegrationNginxCacheTests {
    struct Static: TargetType {
        var path: String
        var method: HTTPMethod = .get
        var task: HTTPTask = .plain
        var headers: [String: String] = [:]
        var baseURL: URL { TLSTestServers.url ?? URL(string: "https://127.0.0.1:9")! }
    }

    @Test(arguments: CacheUnderTest.allCases)
    func staticFilesAreRevalidatedWith304sOnTheWire(_ under: CacheUnderTest) async throws {
        let storage = try under.make(limits: CacheLimits(maxTotalBytes: 8 << 20, maxEntryBytes: 2 << 20))
        defer { storage.remove() }
        let provider = Provider<Static>(cache: HTTPCache(storage: storage.storage, heuristicFreshnessCap: .zero))
        let marker = "cache-\(UUID().uuidString)"
        let target = Static(path: "1m.bin?m=\(marker)")
        let first = try await provider.request(target)
        #expect(first.cacheStatus == .network)
        let etag = try #require(first.value(forHTTPHeaderField: "ETag"))
        #expect(first.value(forHTTPHeaderField: "Last-Modified") != nil)
        #expect(first.data.count == 1 << 20)
        for _ in 0..<3 {
            let again = try await provider.request(target)
            #expect(again.cacheStatus == .revalidated)
            #expect(again.statusCode == 200)
            #expect(again.data == first.data)
            #expect(again.request?.value(forHTTPHeaderField: "If-None-Match") == etag)
        }
        // Four requests reached nginx: one 200 and three 304s (a 304 carries no body, so the stored
        // megabyte was not sent again).
        #expect(await TLSTestServers.requests(containing: marker, atLeast: 4).count == 4)
        #expect(await storage.contents().count == 1)
    }
}
