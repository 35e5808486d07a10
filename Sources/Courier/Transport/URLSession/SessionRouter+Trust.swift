// Trust policies in URLSession's delegate, on Apple platforms. Written against the documented
// Security and URLSession APIs; compiled for Apple platforms but not yet run there (nothing in
// this repository builds for them). FoundationNetworking on Linux never sends these challenges,
// which is why URLSessionTransport refuses the policies there.
#if canImport(Security) && !canImport(FoundationNetworking)
    import Foundation
    import Security

    extension SessionRouter {
        /// Answers a server-trust or client-certificate challenge by the host's policy. Returns
        /// `false` when the policy adds nothing to the system's handling of this challenge.
        func answerTrustChallenge(
            _ challenge: URLAuthenticationChallenge, task: URLSessionTask, trust: ResolvedTrustPolicies,
            _ completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) -> Bool {
            let space = challenge.protectionSpace
            let host = space.host
            let policy = trust.policy(forHost: host)
            switch space.authenticationMethod {
            case NSURLAuthenticationMethodServerTrust:
                guard policy.customizesServerTrust, let serverTrust = space.serverTrust else { return false }
                let (failure, chain) = AppleTrust.evaluate(serverTrust, host: host, policy: policy)
                if case (let reason, let detail)? = failure {
                    refuse(
                        task, error: TrustFailure.error(host: host, reason: reason, detail: detail), completionHandler)
                    return true
                }
                let credential = CredentialBox(credential: URLCredential(trust: serverTrust))
                guard let evaluator = policy.evaluator else {
                    BlockingIO.thread { completionHandler(.useCredential, credential.credential) }
                    return true
                }
                let evaluation = TrustEvaluation(host: host, certificates: chain)
                Task {
                    do {
                        try await evaluator(evaluation)
                        completionHandler(.useCredential, credential.credential)
                    } catch {
                        let failure = TrustFailure.error(
                            host: host, reason: .refusedByEvaluator, detail: "\(error)", underlying: error)
                        self.refuse(task, error: failure, completionHandler)
                    }
                }
                return true
            case NSURLAuthenticationMethodClientCertificate:
                guard let identity = policy.clientIdentity, case .pkcs12(let data, let password) = identity,
                    case (let secIdentity, let chain)? = AppleTrust.identity(pkcs12: data, password: password)
                else { return false }
                // The intermediates only: the identity carries its own certificate.
                let credential = CredentialBox(
                    credential: URLCredential(
                        identity: secIdentity, certificates: Array(chain.dropFirst()), persistence: .forSession))
                BlockingIO.thread { completionHandler(.useCredential, credential.credential) }
                return true
            default:
                return false
            }
        }

        /// Refuses the challenge; the task ends with `error` instead of a cancellation.
        private func refuse(
            _ task: URLSessionTask, error: CourierError,
            _ completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            fail(task, with: error)
            // Answered off the delegate queue, which is the session's own (see InlineDelegateQueue).
            BlockingIO.thread { completionHandler(.cancelAuthenticationChallenge, nil) }
        }
    }

    /// A credential handed from the delegate to the queue that answers the challenge.
    // @unchecked: URLCredential is immutable once made, but older SDKs do not mark it Sendable;
    // the completion handler that receives it is the platform's.
    private struct CredentialBox: @unchecked Sendable {
        let credential: URLCredential
    }

    /// The Security framework calls behind the trust policies.
    enum AppleTrust {
        /// Evaluates `trust` for `host` by the policy's roots, then its pins. Returns why it fails
        /// (`nil` when it passes) and the chain as evaluated, leaf first, in DER.
        static func evaluate(
            _ trust: SecTrust, host: String, policy: ResolvedTrustPolicy
        ) -> ((ServerTrustReason, String)?, [Data]) {
            guard SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString)) == errSecSuccess else {
                return ((.other, "the SSL policy could not be set"), [])
            }
            switch policy.roots {
            case .system:
                break
            case .adding(let roots), .only(let roots):
                let anchors = roots.compactMap { SecCertificateCreateWithData(nil, $0 as CFData) }
                let only: Bool
                if case .only = policy.roots { only = true } else { only = false }
                guard SecTrustSetAnchorCertificates(trust, anchors as CFArray) == errSecSuccess,
                    SecTrustSetAnchorCertificatesOnly(trust, only) == errSecSuccess
                else { return ((.other, "the policy's roots could not be set"), []) }
            }
            var error: CFError?
            let valid = SecTrustEvaluateWithError(trust, &error)
            let certificates = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
            let chain = certificates.map { SecCertificateCopyData($0) as Data }
            guard valid else {
                let detail = error.map { CFErrorCopyDescription($0) as String } ?? "no detail"
                return ((reason(for: error), detail), chain)
            }
            return (policy.pinFailure(chain: chain).map { (ServerTrustReason.pinMismatch, $0) }, chain)
        }

        /// The reason for a failed evaluation, from the Security framework's error code.
        private static func reason(for error: CFError?) -> ServerTrustReason {
            guard let error else { return .other }
            switch OSStatus(truncatingIfNeeded: CFErrorGetCode(error)) {
            case errSecCertificateExpired: return .expired
            case errSecCertificateNotValidYet: return .notYetValid
            case errSecHostNameMismatch: return .hostnameMismatch
            case errSecCertificateRevoked: return .revoked
            default: return .untrustedIssuer
            }
        }

        /// The identity and the certificate chain in a PKCS #12 archive, or `nil` if it cannot be
        /// read with the password.
        static func identity(pkcs12 data: Data, password: String) -> (SecIdentity, [SecCertificate])? {
            var items: CFArray?
            let options = [kSecImportExportPassphrase as String: password] as CFDictionary
            guard SecPKCS12Import(data as CFData, options, &items) == errSecSuccess,
                let first = (items as? [[String: Any]])?.first,
                let value = first[kSecImportItemIdentity as String],
                CFGetTypeID(value as AnyObject) == SecIdentityGetTypeID()
            else { return nil }
            // The type was checked just above.
            let identity = value as! SecIdentity
            let chain = (first[kSecImportItemCertChain as String] as? [SecCertificate]) ?? []
            return (identity, chain)
        }
    }
#endif
