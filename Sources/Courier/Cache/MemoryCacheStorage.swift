/// Responses kept in memory, bounded by ``CacheLimits`` and evicting the least recently used.
///
/// An actor: share one between providers freely. Eviction looks at every entry, which is cheap
/// at the default bound of 10,000 entries.
public actor MemoryCacheStorage: CacheStorage {
    /// The bounds.
    public nonisolated let limits: CacheLimits

    private var entries: [String: (response: CachedResponse, used: UInt64)] = [:]
    private var tick: UInt64 = 0
    /// The bytes held, as ``CachedResponse/byteCount`` counts them.
    public private(set) var totalBytes = 0
    /// How many responses are held.
    public var count: Int { entries.count }

    /// Creates an empty memory storage.
    /// - Parameter limits: The bounds. Default: ``CacheLimits/memoryDefault`` (32 MiB).
    public init(limits: CacheLimits = .memoryDefault) {
        self.limits = limits
    }

    public func response(forKey key: String) async -> CachedResponse? {
        guard let entry = entries[key] else { return nil }
        tick += 1
        entries[key] = (entry.response, tick)
        return entry.response
    }

    public func store(_ response: CachedResponse, forKey key: String) async {
        remove(key)
        guard limits.admits(response) else { return }
        tick += 1
        entries[key] = (response, tick)
        totalBytes += response.byteCount
        while totalBytes > limits.maxTotalBytes || entries.count > limits.maxEntries,
            let oldest = entries.min(by: { $0.value.used < $1.value.used })?.key
        {
            remove(oldest)
        }
    }

    public func removeResponse(forKey key: String) async {
        remove(key)
    }

    public func removeAll() async {
        entries.removeAll()
        totalBytes = 0
    }

    private func remove(_ key: String) {
        if let old = entries.removeValue(forKey: key) { totalBytes -= old.response.byteCount }
    }
}
