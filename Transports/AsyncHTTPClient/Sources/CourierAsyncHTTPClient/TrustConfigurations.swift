import Courier
import Foundation
import NIOSSL

/// Courier's ``Courier/TrustPolicies`` as AsyncHTTPClient TLS configurations, made once with the
/// transport: one per policy that is not the system's, set on each request to its host.
///
/// AsyncHTTPClient keeps a connection pool per host and TLS configuration, so the client holds at
/// most one pool per host and policy: as many as the policies you give, no more.
///
/// What AsyncHTTPClient 1.37 allows, from its source: roots (`trustRoots`,
/// `additionalTrustRoots`) and a client certificate (`certificateChain`, `privateKey`) through a
/// `TLSConfiguration`, per client or per request. It builds its `NIOSSLClientHandler` itself, without
/// NIOSSL's verification callbacks, and offers no hook on the connection: nothing of Courier's can
/// see the server's certificate before the request is written. Pins and evaluators are therefore
/// refused (``Courier/TrustConfigurationError``) rather than checked after the request went out.
struct TrustConfigurations: Sendable {
    let policies: TrustPolicies
    /// The default policy's configuration; `nil` for the system's evaluation (the client's own).
    let fallback: TLSConfiguration?
    /// By key of `policies.hosts`; `nil` for a host with the system's evaluation.
    let hosts: [String: TLSConfiguration?]

    init(_ policies: TrustPolicies, base: TLSConfiguration) throws(TrustConfigurationError) {
        try policies.validate()
        self.policies = policies
        fallback = try Self.configuration(policies.default, host: nil, base: base)
        var hosts: [String: TLSConfiguration?] = [:]
        for (host, policy) in policies.hosts {
            hosts[host] = try Self.configuration(policy, host: host, base: base)
        }
        self.hosts = hosts
    }

    /// Whether every host gets the system's evaluation (nothing to set on requests).
    var isSystem: Bool { fallback == nil && hosts.values.allSatisfy { $0 == nil } }

    /// The TLS configuration for a request to `host`; `nil` leaves the client's own.
    func configuration(forHost host: String) -> TLSConfiguration? {
        guard let key = policies.key(forHost: host) else { return fallback }
        return hosts[key] ?? nil
    }

    /// `base` with the policy applied; `nil` when the policy is the system's evaluation.
    static func configuration(
        _ policy: TrustPolicy, host: String?, base: TLSConfiguration
    ) throws(TrustConfigurationError) -> TLSConfiguration? {
        if !policy.pins.isEmpty {
            throw TrustConfigurationError(
                setting: .pins, problem: .unsupported, host: host,
                reason:
                    "AsyncHTTPClient 1.37 gives no hook to see the server's certificate before the request is "
                    + "sent, so no pin could be checked in time; trust only your own CA instead, "
                    + "TrustPolicy(roots: .only([yourCA])), or pin with URLSessionTransport on Apple platforms")
        }
        if policy.evaluator != nil {
            throw TrustConfigurationError(
                setting: .evaluator, problem: .unsupported, host: host,
                reason:
                    "AsyncHTTPClient 1.37 gives no hook to see the server's certificate before the request is "
                    + "sent, so an evaluator could not run in time; use roots (added or replaced) here, or "
                    + "URLSessionTransport on Apple platforms")
        }
        var configuration = base
        var changed = false
        switch policy.roots {
        case .system:
            break
        case .adding(let roots):
            configuration.additionalTrustRoots.append(.certificates(try certificates(roots, host: host)))
            changed = true
        case .only(let roots):
            configuration.trustRoots = .certificates(try certificates(roots, host: host))
            configuration.additionalTrustRoots = []
            changed = true
        }
        if let identity = policy.clientIdentity {
            let (chain, key) = try Self.identity(identity, host: host)
            configuration.certificateChain = chain.map { .certificate($0) }
            configuration.privateKey = .privateKey(key)
            changed = true
        }
        return changed ? configuration : nil
    }

    private static func certificates(
        _ roots: [TrustCertificate], host: String?
    ) throws(TrustConfigurationError) -> [NIOSSLCertificate] {
        var certificates: [NIOSSLCertificate] = []
        for root in roots {
            for der in try root.derCertificates() {
                do {
                    certificates.append(try NIOSSLCertificate(bytes: [UInt8](der), format: .der))
                } catch {
                    throw TrustConfigurationError(
                        setting: .certificate, problem: .invalid, host: host,
                        reason: "a root certificate could not be read by NIOSSL")
                }
            }
        }
        return certificates
    }

    private static func identity(
        _ identity: ClientIdentity, host: String?
    ) throws(TrustConfigurationError) -> ([NIOSSLCertificate], NIOSSLPrivateKey) {
        do {
            switch identity {
            case .pem(let chain, let key):
                let certificates = try NIOSSLCertificate.fromPEMBytes([UInt8](chain))
                guard !certificates.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
                return (certificates, try NIOSSLPrivateKey(bytes: [UInt8](key), format: .pem))
            case .pkcs12(let data, let password):
                let bundle = try NIOSSLPKCS12Bundle(buffer: [UInt8](data), passphrase: Array(password.utf8))
                guard !bundle.certificateChain.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
                return (bundle.certificateChain, bundle.privateKey)
            }
        } catch {
            // Neither the key nor the password is repeated, nor BoringSSL's error dump.
            throw TrustConfigurationError(
                setting: .clientIdentity, problem: .invalid, host: host,
                reason: "\(identity) could not be read: a wrong password, or not a certificate chain and its key")
        }
    }
}
