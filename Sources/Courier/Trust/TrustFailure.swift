import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The error a transport reports when a trust policy refuses a server during the handshake (a
/// pin that does not match, a chain that does not lead to the policy's roots, an evaluator that
/// threw): `URLError(.serverCertificateUntrusted)` naming the host and the reason, under
/// ``CourierError/underlying(_:_:)``. Nothing of the request was sent.
enum TrustFailure {
    static func error(host: String, reason: String, underlying: (any Error)? = nil) -> CourierError {
        var info: [String: Any] = [
            NSLocalizedDescriptionKey: "The certificate of \(host) is not trusted: \(reason)",
            "host": host,
        ]
        if let underlying { info[NSUnderlyingErrorKey] = underlying }
        return .underlying(URLError(.serverCertificateUntrusted, userInfo: info), nil)
    }
}
