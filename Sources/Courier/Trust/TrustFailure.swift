import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The error a transport reports when a trust policy refuses a server during the handshake:
/// ``CourierError/serverTrust(host:reason:underlying:)`` with the host, the reason, and what
/// refused it underneath. Nothing of the request was sent.
enum TrustFailure {
    /// - Parameters:
    ///   - host: The host whose certificate was refused.
    ///   - reason: Why: a chain that does not lead to the policy's roots, ``ServerTrustReason/pinMismatch``
    ///     or ``ServerTrustReason/refusedByEvaluator``.
    ///   - detail: What the platform or the check said, kept in the underlying error's description.
    ///   - underlying: The platform's or the evaluator's error, when there is one.
    static func error(
        host: String, reason: ServerTrustReason, detail: String, underlying: (any Error)? = nil
    ) -> CourierError {
        if let underlying { return .serverTrust(host: host, reason: reason, underlying: underlying) }
        let info: [String: Any] = [
            NSLocalizedDescriptionKey: "The certificate of \(host) is not trusted: \(reason) (\(detail))"
        ]
        return .serverTrust(
            host: host, reason: reason, underlying: URLError(.serverCertificateUntrusted, userInfo: info))
    }
}
