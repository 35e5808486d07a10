import Foundation

/// A check of your own in a ``TrustPolicy``: it runs after the chain and the pins passed, and
/// refuses the server by throwing (the error is kept in the failure Courier reports).
///
/// It runs during the TLS handshake, before any byte of the request is sent, once per new
/// connection (not per request).
public typealias TrustEvaluator = @Sendable (TrustEvaluation) async throws -> Void

/// What a ``TrustEvaluator`` is asked about.
public struct TrustEvaluation: Sendable {
    /// The host the connection is for.
    public let host: String
    /// The chain the server presented, as evaluated: leaf first, each certificate in DER.
    public let certificates: [Data]

    /// Creates an evaluation (Courier's transports make these; tests of an evaluator can too).
    /// - Parameters:
    ///   - host: The host.
    ///   - certificates: The chain, leaf first, in DER.
    public init(host: String, certificates: [Data]) {
        self.host = host
        self.certificates = certificates
    }
}
