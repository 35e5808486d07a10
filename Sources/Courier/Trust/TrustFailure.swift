import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The error a transport reports when a trust policy refuses a server during the handshake:
/// `URLError(.serverCertificateUntrusted)` naming the host and the reason, under
/// ``CourierError/underlying(_:_:)``. Nothing of the request was sent.
///
/// The one place that spells this error: when `CourierError` gains a case for refused
/// certificates, each ``Kind`` maps to its reason here.
enum TrustFailure {
    enum Kind {
        /// The chain does not lead to the policy's roots for the host.
        case chain
        /// No certificate of the chain matches a pin.
        case pins
        /// The policy's evaluator threw.
        case evaluator
    }

    static func error(host: String, kind: Kind, detail: String, underlying: (any Error)? = nil) -> CourierError {
        let reason =
            switch kind {
            case .chain: "the chain does not lead to a trusted root for the host (\(detail))"
            case .pins: "no certificate of the chain matches a pin (\(detail))"
            case .evaluator: "the policy's evaluator refused it (\(detail))"
            }
        var info: [String: Any] = [
            NSLocalizedDescriptionKey: "The certificate of \(host) is not trusted: \(reason)",
            "host": host,
        ]
        if let underlying { info[NSUnderlyingErrorKey] = underlying }
        return .underlying(URLError(.serverCertificateUntrusted, userInfo: info), nil)
    }
}
