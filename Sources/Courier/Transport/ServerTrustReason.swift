import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Why a server's certificate was refused, in ``CourierError/serverTrust(host:reason:underlying:)``.
///
/// Both transports refuse these by default (the system's evaluation) and report them this way:
/// `URLSessionTransport` from URLSession's error (libcurl's message on Linux, the `URLError`
/// code on Apple platforms), `AsyncHTTPClientTransport` from SwiftNIO's TLS error and the
/// certificate the server presented.
public enum ServerTrustReason: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The certificate's validity period has ended.
    case expired
    /// The certificate's validity period has not begun.
    case notYetValid
    /// The certificate is for other host names than the one asked for.
    case hostnameMismatch
    /// The certificate is signed by itself, and it is not a trusted root.
    case selfSigned
    /// The certificate does not lead to a trusted root: its authority is unknown or missing.
    case untrustedIssuer
    /// The certificate was revoked by its authority.
    case revoked
    /// No certificate of the chain matches a pin of the host's ``TrustPolicy``.
    case pinMismatch
    /// The host's ``TrustPolicy/evaluator`` threw (its error is the underlying error).
    case refusedByEvaluator
    /// The certificate was refused for another reason; the underlying error says which.
    case other

    /// The reason as the end of a sentence ("the certificate … was refused: it has expired").
    public var description: String {
        switch self {
        case .expired: "it has expired"
        case .notYetValid: "it is not valid yet"
        case .hostnameMismatch: "it is for another host"
        case .selfSigned: "it is self-signed"
        case .untrustedIssuer: "it is not signed by a trusted authority"
        case .revoked: "it was revoked"
        case .pinMismatch: "no certificate of its chain matches a pin"
        case .refusedByEvaluator: "the trust policy's evaluator refused it"
        case .other: "it could not be verified"
        }
    }
}

extension ServerTrustReason {
    /// The reason in libcurl's message for a refused certificate (FoundationNetworking reports it
    /// as `URLError(-1)` with this text), or `nil` when the message is about something else.
    /// libcurl writes "SSL certificate problem: <OpenSSL's verify text>" for a chain it refused
    /// and "SSL: … does not match target host name …" for a name it refused.
    init?(curlMessage message: String) {
        let text = message.lowercased()
        if text.hasPrefix("ssl:"), text.contains("target host name") || text.contains("common name") {
            self = .hostnameMismatch
            return
        }
        guard text.hasPrefix("ssl certificate problem:") else { return nil }
        let problem = text.dropFirst("ssl certificate problem:".count)
        if problem.contains("has expired") {
            self = .expired
        } else if problem.contains("not yet valid") {
            self = .notYetValid
        } else if problem.contains("revoked") {
            self = .revoked
        } else if problem.contains("in certificate chain") {
            // A chain that ends in a root nobody trusts (the server sent the root itself).
            self = .untrustedIssuer
        } else if problem.contains("self-signed") || problem.contains("self signed") {
            self = .selfSigned
        } else if problem.contains("issuer certificate") || problem.contains("verify the first certificate") {
            self = .untrustedIssuer
        } else if problem.contains("hostname mismatch") {
            self = .hostnameMismatch
        } else {
            self = .other
        }
    }

    /// The reason an Apple platform's `URLError` code stands for, or `nil` when the code is not
    /// about the server's certificate.
    init?(appleCode code: URLError.Code) {
        switch code {
        case .serverCertificateHasBadDate: self = .expired
        case .serverCertificateNotYetValid: self = .notYetValid
        case .serverCertificateHasUnknownRoot: self = .untrustedIssuer
        case .serverCertificateUntrusted: self = .other
        default: return nil
        }
    }
}

extension CourierError {
    /// ``serverTrust(host:reason:underlying:)`` when `error` (from URLSession) says the server's
    /// certificate was refused, `nil` otherwise.
    static func serverTrust(from error: any Error, url: URL?) -> CourierError? {
        guard let urlError = URLErrors.normalize(error) as? URLError else { return nil }
        let reason: ServerTrustReason?
        if urlError.code == .unknown, let message = urlError.userInfo[NSLocalizedDescriptionKey] as? String {
            reason = ServerTrustReason(curlMessage: message)
        } else {
            reason = ServerTrustReason(appleCode: urlError.code)
        }
        guard let reason else { return nil }
        let host = url?.host ?? urlError.failingURL?.host ?? ""
        return .serverTrust(host: host, reason: reason, underlying: urlError)
    }
}
