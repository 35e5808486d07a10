import Foundation

/// How a transport decides whether to trust a server's certificate, and which certificate it
/// shows when the server asks for one (mutual TLS): the counterpart of Alamofire's trust
/// evaluators.
///
/// The default, ``system``, is the platform's own evaluation and no client certificate: what the
/// transport does without a policy. Each part tightens or replaces it:
///
/// ```swift
/// let policy = TrustPolicy(
///     roots: .only([.pem(privateCA)]),
///     pins: [.publicKey(sha256: "current key…="), .publicKey(sha256: "backup key…=")],
///     clientIdentity: .pkcs12(p12, password: password))
/// ```
///
/// A server is trusted when, in this order: its chain is valid for the host against ``roots``
/// (dates, names, signatures), at least one certificate in the chain matches one of ``pins`` (when
/// there are pins), and ``evaluator`` (when there is one) returns without throwing.
///
/// Not every transport can do every part (see <doc:TLSAndTrust> for the matrix). A transport
/// checks its policies when it is made and throws ``TrustConfigurationError`` for a part it cannot
/// enforce: a policy is never accepted and then not enforced. There is no setting that turns
/// verification off.
public struct TrustPolicy: Sendable {
    /// The certificates a server's chain must lead to.
    public enum Roots: Sendable {
        /// The system's trust store. The default.
        case system
        /// The system's trust store and these certificates (a private CA next to the public ones).
        case adding([TrustCertificate])
        /// Only these certificates: the system's store is not consulted (a private CA alone).
        case only([TrustCertificate])
    }

    /// The certificates a server's chain must lead to. Default: ``Roots/system``.
    public var roots: Roots
    /// Pins: when not empty, at least one certificate of the server's chain (the leaf, an
    /// intermediate or the root) must match one of them, besides a valid chain. List the key you
    /// serve now and at least one backup key, so a key change does not lock your app out.
    /// Default: none.
    public var pins: [TrustPin]
    /// A last check of your own, run after the chain and the pins passed; it refuses the server by
    /// throwing. Default: none.
    public var evaluator: TrustEvaluator?
    /// The certificate and key shown when the server asks for a client certificate (mutual TLS).
    /// Default: none (the server's request for a certificate goes unanswered).
    public var clientIdentity: ClientIdentity?

    /// Creates a policy.
    /// - Parameters:
    ///   - roots: The certificates a chain must lead to. Default: ``Roots/system``.
    ///   - pins: Certificate or public-key pins; at least one must match when any are given.
    ///     Default: none.
    ///   - evaluator: A check of your own, after the others. Default: none.
    ///   - clientIdentity: The identity for mutual TLS. Default: none.
    public init(
        roots: Roots = .system, pins: [TrustPin] = [], evaluator: TrustEvaluator? = nil,
        clientIdentity: ClientIdentity? = nil
    ) {
        self.roots = roots
        self.pins = pins
        self.evaluator = evaluator
        self.clientIdentity = clientIdentity
    }

    /// The system's evaluation and no client certificate: what a transport does by default.
    public static var system: TrustPolicy { TrustPolicy() }

    /// Whether the policy is the system's evaluation with nothing added.
    var isSystem: Bool {
        guard case .system = roots else { return false }
        return pins.isEmpty && evaluator == nil && clientIdentity == nil
    }
}
