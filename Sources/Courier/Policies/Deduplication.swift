/// Which requests a provider merges while one like it is in flight.
///
/// When a request is merged, it does not go out: it waits for the identical request already in
/// flight and gets the same response (or error). Requests are identical when their final prepared
/// `URLRequest`s (after plugins' `prepare`) have the same method, URL, headers and body bytes.
///
/// Set it on the provider (default ``disabled``) and override it per target with
/// ``TargetType/deduplication``.
public struct Deduplication: Sendable, Hashable {
    /// The methods merged; `nil` means every method.
    public let methods: Set<HTTPMethod>?

    /// Nothing is merged (the provider's default).
    public static let disabled = Deduplication(methods: [])
    /// `GET`, `HEAD` and `OPTIONS` requests are merged: reads, which are safe to share.
    public static let enabled = Deduplication(methods: [.get, .head, .options])
    /// Requests of every method are merged, writes included.
    public static let allMethods = Deduplication(methods: nil)

    /// Merges requests of exactly these methods.
    /// - Parameter methods: The methods to merge.
    /// - Returns: The policy.
    public static func methods(_ methods: Set<HTTPMethod>) -> Deduplication {
        Deduplication(methods: methods)
    }

    /// Whether nothing is merged (``disabled``, or no methods), read without comparing sets
    /// (issue 29: `!= .disabled` compared two `Set`s for every call).
    var mergesNothing: Bool { methods?.isEmpty == true }

    /// Whether a request with this method is merged.
    /// - Parameter method: The request's method.
    /// - Returns: `true` when the policy merges it.
    public func applies(to method: HTTPMethod) -> Bool {
        methods?.contains(method) ?? true
    }
}
