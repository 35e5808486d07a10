import Foundation

/// A ``TrustPolicy`` read and checked once, when a transport is made: certificates decoded to
/// DER, pins decoded to digests. Transports enforce this form.
package struct ResolvedTrustPolicy: Sendable {
    package enum Roots: Sendable {
        case system
        case adding([Data])
        case only([Data])
    }

    /// The host the policy is for; `nil` for the default policy.
    package let host: String?
    package let roots: Roots
    /// SHA-256 digests of `SubjectPublicKeyInfo`s.
    package let keyPins: Set<Data>
    /// Certificates in DER.
    package let certificatePins: Set<Data>
    package let evaluator: TrustEvaluator?
    package let clientIdentity: ClientIdentity?
    package let isSystem: Bool

    package var hasPins: Bool { !keyPins.isEmpty || !certificatePins.isEmpty }

    /// Whether the chain is checked against the system's store alone.
    package var usesSystemRoots: Bool {
        if case .system = roots { return true }
        return false
    }

    /// Whether the server's certificate is judged by more than the system's evaluation.
    package var customizesServerTrust: Bool { !usesSystemRoots || hasPins || evaluator != nil }

    package init(_ policy: TrustPolicy, host: String?) throws(TrustConfigurationError) {
        self.host = host
        do throws(TrustConfigurationError) {
            switch policy.roots {
            case .system: roots = .system
            case .adding(let certificates): roots = .adding(try Self.der(certificates))
            case .only(let certificates): roots = .only(try Self.der(certificates))
            }
            var keyPins = Set<Data>()
            var certificatePins = Set<Data>()
            for pin in policy.pins {
                switch pin.kind {
                case .publicKey(let base64):
                    guard let digest = Data(base64Encoded: base64), digest.count == 32 else {
                        throw TrustConfigurationError(
                            setting: .pins, problem: .invalid, host: host,
                            reason: "a public-key pin is the base64 of a SHA-256 digest (32 bytes, 44 characters)")
                    }
                    keyPins.insert(digest)
                case .certificate(let certificate):
                    certificatePins.formUnion(try certificate.derCertificates())
                }
            }
            self.keyPins = keyPins
            self.certificatePins = certificatePins
        } catch {
            throw error.forHost(host)
        }
        evaluator = policy.evaluator
        clientIdentity = policy.clientIdentity
        isSystem = policy.isSystem
    }

    private static func der(_ certificates: [TrustCertificate]) throws(TrustConfigurationError) -> [Data] {
        var all: [Data] = []
        for certificate in certificates { all += try certificate.derCertificates() }
        guard !all.isEmpty else {
            throw TrustConfigurationError(
                setting: .roots, problem: .invalid, host: nil, reason: "a list of roots is empty")
        }
        return all
    }

    /// Why a chain (leaf first, DER) fails the pins, or `nil` when it passes (or there are none).
    package func pinFailure(chain: [Data]) -> String? {
        guard hasPins else { return nil }
        for certificate in chain {
            if certificatePins.contains(certificate) { return nil }
            if !keyPins.isEmpty, let spki = DER.subjectPublicKeyInfo(ofCertificate: certificate),
                keyPins.contains(SHA256.hash(spki))
            {
                return nil
            }
        }
        return "\(chain.count) certificates, \(keyPins.count + certificatePins.count) pins"
    }
}

/// ``TrustPolicies`` read and checked once.
package struct ResolvedTrustPolicies: Sendable {
    package let `default`: ResolvedTrustPolicy
    /// By normalized host name.
    package let hosts: [String: ResolvedTrustPolicy]

    package init(_ policies: TrustPolicies) throws(TrustConfigurationError) {
        try policies.validateHosts()
        self.default = try ResolvedTrustPolicy(policies.default, host: nil)
        var hosts: [String: ResolvedTrustPolicy] = [:]
        for (name, policy) in policies.hosts {
            hosts[TrustPolicies.normalize(name)] = try ResolvedTrustPolicy(policy, host: name)
        }
        self.hosts = hosts
    }

    /// Every policy, the default first, then by host.
    package var all: [ResolvedTrustPolicy] {
        [self.default] + hosts.keys.sorted().compactMap { hosts[$0] }
    }

    package func policy(forHost host: String) -> ResolvedTrustPolicy {
        hosts[TrustPolicies.normalize(host)] ?? self.default
    }
}
