/// Where a response came from when the provider has an ``HTTPCache`` (``Response/cacheStatus``).
public enum CacheStatus: Sendable, Hashable, CustomStringConvertible {
    /// From the network (or a stub): no stored response was used.
    case network
    /// From the cache, without the network.
    case hit
    /// A stored response the server confirmed with `304 Not Modified`; its headers are updated
    /// from the 304.
    case revalidated
    /// A stale stored response, because the network failed (`stale-if-error`, or
    /// ``CachePolicy/Mode/staleWhileOffline``).
    case staleAfterError

    public var description: String {
        switch self {
        case .network: "network"
        case .hit: "cache hit"
        case .revalidated: "revalidated"
        case .staleAfterError: "stale after error"
        }
    }
}

extension Response {
    /// Where this response came from: ``CacheStatus/network`` unless an ``HTTPCache`` answered.
    /// Plugins see it in `didReceive`, `process` and `didFinish`.
    public var cacheStatus: CacheStatus { transferMetrics?.cacheStatus ?? .network }
}

extension RequestMetrics {
    /// Where the call's last attempt was answered from (``CacheStatus``).
    public var cacheStatus: CacheStatus { attempts.last?.transfer?.cacheStatus ?? .network }
}
