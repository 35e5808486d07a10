import Foundation

/// How one target's requests use the provider's ``HTTPCache`` (``TargetType/cachePolicy``).
///
/// Without a cache on the provider every policy means "the network", exactly as before.
public struct CachePolicy: Sendable, Hashable {
    /// Where an answer may come from.
    public enum Mode: Sendable, Hashable {
        /// RFC 9111's rules for a private cache: a fresh stored response answers; a stale one is
        /// revalidated with `If-None-Match` / `If-Modified-Since`; `stale-if-error` may answer
        /// when the network fails.
        case protocolRules
        /// Always the network, without validators; a storable response is still stored, so later
        /// calls with other policies can use it.
        case networkOnly
        /// Any stored response answers, fresh or stale, without the network; the network only on
        /// a miss.
        case cacheFirst
        /// Only stored responses, fresh or stale; a miss fails with ``HTTPCacheMiss`` (inside
        /// ``CourierError/underlying(_:_:)``) and sends nothing.
        case cacheOnly
        /// ``protocolRules``, and when the network fails (no response at all) a stored response
        /// answers however stale, unless it says `must-revalidate` or `no-cache`.
        case staleWhileOffline
    }

    /// Where an answer may come from.
    public var mode: Mode
    /// Whether responses to requests that carry `Authorization` are stored. Default: `false`:
    /// they are personal, and the cache may be on disk.
    public var storesAuthorizedResponses: Bool

    /// Creates a policy.
    /// - Parameters:
    ///   - mode: Where an answer may come from.
    ///   - storesAuthorizedResponses: Whether responses to requests with `Authorization` are
    ///     stored. Default: `false`.
    public init(_ mode: Mode, storesAuthorizedResponses: Bool = false) {
        self.mode = mode
        self.storesAuthorizedResponses = storesAuthorizedResponses
    }

    /// RFC 9111's rules (the default for every target).
    public static let protocolRules = CachePolicy(.protocolRules)
    /// Always the network; storable responses are stored.
    public static let networkOnly = CachePolicy(.networkOnly)
    /// A stored response however old, else the network.
    public static let cacheFirst = CachePolicy(.cacheFirst)
    /// A stored response however old, else ``HTTPCacheMiss``.
    public static let cacheOnly = CachePolicy(.cacheOnly)
    /// RFC 9111's rules, and a stale response when the network fails.
    public static let staleWhileOffline = CachePolicy(.staleWhileOffline)

    /// This policy, also storing responses to requests that carry `Authorization`.
    public func storingAuthorizedResponses() -> CachePolicy {
        CachePolicy(mode, storesAuthorizedResponses: true)
    }
}

/// A ``CachePolicy/Mode/cacheOnly`` request found nothing usable in the cache.
public struct HTTPCacheMiss: Error, Sendable, Hashable, CustomStringConvertible {
    /// The URL that was looked up.
    public var url: URL?

    /// Creates the error.
    public init(url: URL?) {
        self.url = url
    }

    public var description: String {
        // The host only: a path or query may hold a secret.
        "no cached response for \(url?.host ?? "the request") (cache only)"
    }
}
