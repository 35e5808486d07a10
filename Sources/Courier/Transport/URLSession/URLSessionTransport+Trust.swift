import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Security)
    import Security
#endif

extension URLSessionTransport {
    /// Throws for a part of `policy` this platform's URLSession cannot enforce, or cannot read.
    static func checkSupported(_ policy: ResolvedTrustPolicy) throws(TrustConfigurationError) {
        #if canImport(FoundationNetworking)
            // Probed (Swift 6.3.1, libcurl 7.88.1): libcurl reads only the system's bundle
            // (/etc/ssl/certs/ca-certificates.crt; URLSessionCertificateAuthorityInfoFile is read on
            // Android only), no server-trust or client-certificate challenge reaches the delegate, and
            // FoundationNetworking never hands libcurl a client certificate.
            let host = policy.host
            if !policy.usesSystemRoots {
                throw TrustConfigurationError(
                    setting: .roots, problem: .unsupported, host: host,
                    reason:
                        "URLSession on Linux (FoundationNetworking, libcurl) reads only the system's CA bundle; "
                        + "use AsyncHTTPClientTransport, which takes added or replaced roots")
            }
            if policy.hasPins {
                throw TrustConfigurationError(
                    setting: .pins, problem: .unsupported, host: host,
                    reason:
                        "URLSession on Linux never asks its delegate about server trust, so no pin could be checked; "
                        + "pins are enforced by URLSessionTransport on Apple platforms. On Linux, trust only your "
                        + "own CA instead: TrustPolicy(roots: .only([yourCA])) on AsyncHTTPClientTransport")
            }
            if policy.evaluator != nil {
                throw TrustConfigurationError(
                    setting: .evaluator, problem: .unsupported, host: host,
                    reason:
                        "URLSession on Linux never asks its delegate about server trust, so an evaluator would never "
                        + "run; evaluators run with URLSessionTransport on Apple platforms")
            }
            if policy.clientIdentity != nil {
                throw TrustConfigurationError(
                    setting: .clientIdentity, problem: .unsupported, host: host,
                    reason:
                        "URLSession on Linux cannot present a client certificate (FoundationNetworking gives libcurl "
                        + "none); use AsyncHTTPClientTransport for mutual TLS")
            }
        #elseif canImport(Security)
            guard let identity = policy.clientIdentity else { return }
            switch identity {
            case .pem:
                throw TrustConfigurationError(
                    setting: .clientIdentity, problem: .unsupported, host: policy.host,
                    reason:
                        "URLSession takes a client identity as a SecIdentity, which a PEM key cannot become without "
                        + "the keychain; give the identity as ClientIdentity.pkcs12(_:password:)")
            case .pkcs12(let data, let password):
                guard AppleTrust.identity(pkcs12: data, password: password) != nil else {
                    throw TrustConfigurationError(
                        setting: .clientIdentity, problem: .invalid, host: policy.host,
                        reason: "the PKCS #12 archive could not be read with its password, or holds no identity")
                }
            }
        #endif
    }
}
