import Foundation

/// The trust policy for each host a transport talks to: one for named hosts, a default for the
/// rest (Alamofire's `ServerTrustManager`).
///
/// ```swift
/// let transport = try AsyncHTTPClientTransport(trust: TrustPolicies(
///     hosts: ["internal.example.com": TrustPolicy(roots: .only([.pem(privateCA)]))]))
/// ```
///
/// A host matches its key exactly, ignoring case and a trailing dot: `api.example.com` does not
/// cover `www.api.example.com`, and there are no wildcards. The policy follows the request: a
/// redirect to another host is evaluated with that host's policy.
///
/// Trust belongs to the transport, which owns the connections; a ``Provider`` uses the policies
/// of the transport it is given.
public struct TrustPolicies: Sendable {
    /// The policy for hosts that ``hosts`` does not name. Default: ``TrustPolicy/system``.
    public var `default`: TrustPolicy
    /// Policies by host name (no scheme, port or path). Default: none.
    public var hosts: [String: TrustPolicy]

    /// Creates a set of policies.
    /// - Parameters:
    ///   - default: The policy for hosts not in `hosts`. Default: ``TrustPolicy/system``.
    ///   - hosts: Policies by host name. Default: none.
    public init(default: TrustPolicy = .system, hosts: [String: TrustPolicy] = [:]) {
        self.default = `default`
        self.hosts = hosts
    }

    /// The system's evaluation for every host.
    public static var system: TrustPolicies { TrustPolicies() }

    /// The policy that applies to a host.
    /// - Parameter host: The host of a request's URL.
    /// - Returns: The host's policy, or ``default``.
    public func policy(forHost host: String) -> TrustPolicy {
        key(forHost: host).flatMap { hosts[$0] } ?? self.default
    }

    /// The key of ``hosts`` that applies to a host (case and a trailing dot aside), or `nil` when
    /// ``default`` does; for transports that prepare something per policy.
    /// - Parameter host: The host of a request's URL.
    /// - Returns: The key as written in ``hosts``.
    public func key(forHost host: String) -> String? {
        let normalized = Self.normalize(host)
        return hosts.keys.first { Self.normalize($0) == normalized }
    }

    /// Reads every value the policies hold (certificates, pins, host keys), as a transport does
    /// when it is made.
    /// - Throws: ``TrustConfigurationError`` (``TrustConfigurationError/Problem/invalid``) for the
    ///   first value that cannot be read, naming its host.
    public func validate() throws(TrustConfigurationError) {
        _ = try ResolvedTrustPolicies(self)
    }

    /// A host as it is compared: lowercased, without a trailing dot or an IPv6 literal's brackets
    /// (`URL.host` gives `::1` for `https://[::1]/`).
    static func normalize(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        if host.hasPrefix("["), host.hasSuffix("]"), host.count > 2 { host = String(host.dropFirst().dropLast()) }
        return host
    }

    /// Refuses host keys that could never match: empty, with a scheme, port, path, spaces or a
    /// wildcard (`*.example.com` matches no host: it was accepted and the hosts it meant got the
    /// default policy, found by review), or two keys for one host. An IPv6 address may be written
    /// with or without brackets.
    func validateHosts() throws(TrustConfigurationError) {
        var seen = Set<String>()
        let forbidden = CharacterSet(charactersIn: "/:@?#[]*").union(.whitespacesAndNewlines)
        let ipv6 = CharacterSet(charactersIn: "0123456789abcdef:.")
        for name in hosts.keys.sorted() {
            let key = Self.normalize(name)
            // An IPv6 address has at least two colons (`::1`); one colon is a port.
            let isIPv6 = key.filter { $0 == ":" }.count >= 2 && key.unicodeScalars.allSatisfy { ipv6.contains($0) }
            guard !key.isEmpty, isIPv6 || key.rangeOfCharacter(from: forbidden) == nil else {
                throw TrustConfigurationError(
                    setting: .host, problem: .invalid, host: name,
                    reason: "a host key is a bare host name such as api.example.com, without scheme, port, path "
                        + "or wildcard (a key matches one host exactly: give each host its own key)")
            }
            guard seen.insert(key).inserted else {
                throw TrustConfigurationError(
                    setting: .host, problem: .invalid, host: name,
                    reason: "two keys name the same host (case and a trailing dot do not count)")
            }
        }
    }
}
