import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Courier's own HTTP cache: RFC 9111's rules for a private (single-user) cache, the same on
/// every transport and platform. Give one to a provider (`Provider(cache: …)`); each target says
/// how it uses it (``TargetType/cachePolicy``, default ``CachePolicy/protocolRules``).
///
/// ```swift
/// let cache = HTTPCache(storage: try DiskCacheStorage(folder: cachesFolder.appending(path: "api")))
/// let provider = Provider<API>(cache: cache)
/// let response = try await provider.request(.profile)
/// print(response.cacheStatus)  // network, hit, revalidated or stale after error
/// ```
///
/// What is stored: responses to `GET` with a final status, unless `no-store` (request or
/// response), `Vary: *`, a request with `Authorization` (unless the target's policy opts in), a
/// `206`, a download or a streamed response; and only with explicit freshness (`max-age`,
/// `Expires`, `public`, `private`) or a status that is cacheable by default (200, 203, 204, 300,
/// 301, 308, 404, 405, 410, 414, 501). `Set-Cookie` and hop-by-hop fields are not kept.
/// See the Caching Responses article for the whole set of rules.
public struct HTTPCache: Sendable {
    /// Where responses are kept.
    public let storage: any CacheStorage
    /// The longest freshness guessed from `Last-Modified` (10% of its age) for a response without
    /// explicit freshness.
    public let heuristicFreshnessCap: Duration
    /// The wall clock ages are computed with (RFC 9111 compares it with `Date` headers).
    let now: @Sendable () -> Date

    /// Creates a cache.
    /// - Parameters:
    ///   - storage: Where responses are kept. Default: a new ``MemoryCacheStorage`` (32 MiB).
    ///   - heuristicFreshnessCap: The longest freshness guessed from `Last-Modified`. Default: 24 hours.
    ///   - now: The current wall-clock time. Default: `Date()`. Tests pass a clock they control
    ///     (CourierTesting's `TestClock.wallClock(startingAt:)`).
    public init(
        storage: any CacheStorage = MemoryCacheStorage(), heuristicFreshnessCap: Duration = .seconds(86_400),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.storage = storage
        self.heuristicFreshnessCap = heuristicFreshnessCap
        self.now = now
    }

    /// Removes every stored response.
    public func removeAll() async {
        await storage.removeAll()
    }

    /// Removes the stored response for a `GET` of `url`.
    /// - Parameter url: The URL.
    public func removeResponse(for url: URL) async {
        if let key = CacheRules.key(for: url) { await storage.removeResponse(forKey: key) }
    }

    /// The stored response for a `GET` of `url`, fresh or not.
    /// - Parameter url: The URL.
    /// - Returns: What is stored, or `nil`.
    public func storedResponse(for url: URL) async -> CachedResponse? {
        guard let key = CacheRules.key(for: url) else { return nil }
        return await storage.response(forKey: key)
    }

    var heuristicCapSeconds: TimeInterval {
        let (seconds, attoseconds) = heuristicFreshnessCap.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
