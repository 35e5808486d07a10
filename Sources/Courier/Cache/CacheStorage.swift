/// Where an ``HTTPCache`` keeps responses: ``MemoryCacheStorage``, ``DiskCacheStorage``, or your own.
///
/// Keys are strings the cache makes (method and URL); a storage may hash them but must not
/// write them where a secret in a URL would show (a file name). Storage never fails a request:
/// a response it cannot keep is simply not kept, and a stored response it cannot read back is a
/// miss. One storage may serve several caches and providers at once.
public protocol CacheStorage: Sendable {
    /// The response stored under `key`, or `nil`.
    /// - Parameter key: The cache's key.
    /// - Returns: The stored response; `nil` when there is none, or it cannot be read.
    func response(forKey key: String) async -> CachedResponse?

    /// Stores `response` under `key`, replacing what was there; a response over the storage's
    /// limits is not stored (and the old one is removed).
    /// - Parameters:
    ///   - response: What to keep.
    ///   - key: The cache's key.
    func store(_ response: CachedResponse, forKey key: String) async

    /// Removes what is stored under `key`.
    /// - Parameter key: The cache's key.
    func removeResponse(forKey key: String) async

    /// Removes every stored response (only what this storage wrote).
    func removeAll() async
}

/// Bounds on what a cache storage keeps. Crossing one never fails a request: the response is
/// simply not stored, or older ones are evicted (least recently used first).
public struct CacheLimits: Sendable, Hashable {
    /// The most bytes all stored responses take together (bodies, URLs and headers).
    public var maxTotalBytes: Int
    /// The largest single response stored (``CachedResponse/byteCount``).
    public var maxEntryBytes: Int
    /// The most responses stored.
    public var maxEntries: Int
    /// The most header fields a stored response may have.
    public var maxHeaderFields: Int
    /// The most bytes a stored response's header fields may take.
    public var maxHeaderBytes: Int

    /// Creates limits.
    /// - Parameters:
    ///   - maxTotalBytes: All responses together.
    ///   - maxEntryBytes: One response. Default: 8 MiB.
    ///   - maxEntries: How many responses. Default: 10,000.
    ///   - maxHeaderFields: Header fields per response. Default: 128.
    ///   - maxHeaderBytes: Header bytes per response. Default: 64 KiB.
    public init(
        maxTotalBytes: Int, maxEntryBytes: Int = 8 << 20, maxEntries: Int = 10_000, maxHeaderFields: Int = 128,
        maxHeaderBytes: Int = 64 << 10
    ) {
        self.maxTotalBytes = maxTotalBytes
        self.maxEntryBytes = maxEntryBytes
        self.maxEntries = maxEntries
        self.maxHeaderFields = maxHeaderFields
        self.maxHeaderBytes = maxHeaderBytes
    }

    /// Memory: 32 MiB in all, 8 MiB per response, 10,000 responses, 128 fields and 64 KiB of
    /// headers per response.
    public static let memoryDefault = CacheLimits(maxTotalBytes: 32 << 20)
    /// Disk: 256 MiB in all, 8 MiB per response, 10,000 responses, 128 fields and 64 KiB of
    /// headers per response.
    public static let diskDefault = CacheLimits(maxTotalBytes: 256 << 20)

    /// Whether one response fits.
    func admits(_ response: CachedResponse) -> Bool {
        response.headers.count + response.varyDigests.count <= maxHeaderFields
            && response.headerByteCount <= maxHeaderBytes && response.byteCount <= maxEntryBytes
            && response.byteCount <= maxTotalBytes && maxEntries > 0
    }
}
