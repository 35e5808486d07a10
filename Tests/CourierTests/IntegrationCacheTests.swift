import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The cache against the real httpbin on 127.0.0.1 (started by `scripts/test`), over URLSession.
@Suite(.enabled(if: HTTPBin.isAvailable, "needs COURIER_HTTPBIN_URL (run scripts/test)"), .timeLimit(.minutes(2)))
struct IntegrationCacheTests {
    let provider = Provider<Bin>(cache: HTTPCache(storage: MemoryCacheStorage()))

    @Test func maxAgeAnswersFromTheCache() async throws {
        let first = try await provider.request(Bin(path: "cache/60"))
        let second = try await provider.request(Bin(path: "cache/60"))
        #expect(first.cacheStatus == .network)
        #expect(second.cacheStatus == .hit)
        #expect(second.data == first.data)
        #expect(second.value(forHTTPHeaderField: "Cache-Control") == "public, max-age=60")
    }

    @Test func anETagIsRevalidatedWithA304() async throws {
        let target = Bin(path: "etag/courier-\(UUID().uuidString)")
        let first = try await provider.request(target)
        let second = try await provider.request(target)
        #expect(first.cacheStatus == .network)
        // No freshness from httpbin here: the stored response is revalidated, and the server's 304
        // becomes the stored body.
        #expect(second.cacheStatus == .revalidated)
        #expect(second.statusCode == 200)
        #expect(second.data == first.data)
        #expect(second.request?.value(forHTTPHeaderField: "If-None-Match") == first.value(forHTTPHeaderField: "ETag"))
    }

    @Test func lastModifiedIsRevalidated() async throws {
        _ = try await provider.request(Bin(path: "cache"))
        let second = try await provider.request(Bin(path: "cache"))
        #expect([CacheStatus.revalidated, .hit].contains(second.cacheStatus))
        #expect(second.statusCode == 200)
    }

    @Test func noStoreIsNotStored() async throws {
        let target = Bin(path: "response-headers?Cache-Control=no-store")
        _ = try await provider.request(target)
        #expect(try await provider.request(target).cacheStatus == .network)
    }

    /// A 302 to a cacheable response: the redirect's target is cached by its own URL's rules, never
    /// under the URL that redirected (URLSessionTransport follows the redirect itself).
    @Test func aRedirectedAnswerIsNotStoredUnderTheRedirectingURL() async throws {
        let target = Bin(path: "redirect-to?url=%2Fcache%2F60&status_code=302")
        let first = try await provider.request(target)
        let second = try await provider.request(target)
        #expect(first.statusCode == 200)
        #expect(first.cacheStatus == .network)
        #expect(second.cacheStatus == .network)
        #expect(second.transferMetrics?.redirects == 1)
    }

    @Test func onDiskAcrossProviders() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-it-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = Provider<Bin>(cache: HTTPCache(storage: try DiskCacheStorage(folder: folder)))
        let second = Provider<Bin>(cache: HTTPCache(storage: try DiskCacheStorage(folder: folder)))
        let network = try await first.request(Bin(path: "cache/120"))
        let hit = try await second.request(Bin(path: "cache/120"))
        #expect(network.cacheStatus == .network)
        #expect(hit.cacheStatus == .hit)
        #expect(hit.data == network.data)
    }
}
