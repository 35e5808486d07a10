import Foundation

/// A trust configuration a transport cannot enforce, or cannot read: thrown when the transport is
/// made, so a pin, a root or an identity is never accepted and then ignored.
///
/// ``description`` says which setting, for which host, why, and what to use instead.
public struct TrustConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The part of a ``TrustPolicy`` (or ``TrustPolicies``) concerned.
    public enum Setting: String, Sendable, Hashable {
        /// ``TrustPolicy/roots``.
        case roots
        /// ``TrustPolicy/pins``.
        case pins
        /// ``TrustPolicy/evaluator``.
        case evaluator
        /// ``TrustPolicy/clientIdentity``.
        case clientIdentity
        /// A certificate given as a root or a pin.
        case certificate
        /// A key of ``TrustPolicies/hosts``.
        case host
    }

    /// Whether the transport cannot do it, or the value given cannot be read.
    public enum Problem: String, Sendable, Hashable {
        /// The transport cannot enforce the setting on this platform.
        case unsupported
        /// The value is malformed (a certificate, a pin, a key, a password, a host name).
        case invalid
    }

    /// The setting concerned.
    public let setting: Setting
    /// Unsupported or invalid.
    public let problem: Problem
    /// The host whose policy it is; `nil` for ``TrustPolicies/default``.
    public let host: String?
    /// Why, and what to use instead.
    public let reason: String

    /// Creates an error.
    /// - Parameters:
    ///   - setting: The setting concerned.
    ///   - problem: Unsupported or invalid.
    ///   - host: The host whose policy it is; `nil` for the default policy.
    ///   - reason: Why, and what to use instead.
    public init(setting: Setting, problem: Problem, host: String?, reason: String) {
        self.setting = setting
        self.problem = problem
        self.host = host
        self.reason = reason
    }

    /// The setting, the policy's host, and ``reason``, as a sentence.
    public var description: String {
        let policy = host.map { "the policy for \($0)" } ?? "the default policy"
        let what = problem == .unsupported ? "cannot be enforced" : "is invalid"
        return "Trust configuration: \(setting.rawValue) in \(policy) \(what): \(reason)."
    }

    /// The same error for the policy of `host`.
    func forHost(_ host: String?) -> TrustConfigurationError {
        TrustConfigurationError(setting: setting, problem: problem, host: self.host ?? host, reason: reason)
    }
}
