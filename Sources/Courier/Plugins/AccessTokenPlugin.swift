import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A target that may carry an access token. Targets that do not conform, or return `nil`, are
/// sent without one.
public protocol AccessTokenAuthorizable: TargetType {
    /// How this target's token is sent, or `nil` for none.
    var authorizationType: AuthorizationType? { get }
}

/// The scheme an access token is sent with in `Authorization`.
public enum AuthorizationType: Sendable, Hashable {
    /// `Authorization: Bearer <token>`.
    case bearer
    /// `Authorization: Basic <token>` (the token is the base64 of `user:password`).
    case basic
    /// `Authorization: <scheme> <token>`.
    case custom(String)

    /// The scheme's name as sent.
    public var scheme: String {
        switch self {
        case .bearer: "Bearer"
        case .basic: "Basic"
        case .custom(let scheme): scheme
        }
    }
}

/// Sets `Authorization` for targets that opt in with ``AccessTokenAuthorizable``, from a token
/// fetched by an async closure. An `Authorization` header already there is replaced, never
/// duplicated.
///
/// ```swift
/// let provider = Provider<API>(plugins: [.accessToken { _ in try await keychain.token() }])
/// ```
///
/// For tokens that must be refreshed when the server refuses them, use ``Authentication``.
public struct AccessTokenPlugin: Plugin {
    private let token: @Sendable (any TargetType) async throws -> String

    /// Creates the plugin.
    /// - Parameter token: Returns the token for a target; a throw stops the request with
    ///   ``CourierError/underlying(_:_:)``.
    public init(token: @escaping @Sendable (any TargetType) async throws -> String) {
        self.token = token
    }

    /// ``PluginHooks/prepare`` alone.
    public var implementedHooks: PluginHooks { .prepare }

    public func prepare(_ request: consuming URLRequest, context: RequestContext) async throws -> URLRequest {
        let target = context.target
        guard let authorizable = target as? any AccessTokenAuthorizable,
            let type = authorizable.authorizationType
        else { return request }
        let value = "\(type.scheme) \(try await token(target))"
        // Refused here: URLRequest would drop a value with CR or LF without a word.
        try HeaderValidation.validate(name: "Authorization", value: value)
        var request = request
        request.setValue(value, forHTTPHeaderField: "Authorization")
        return request
    }
}

/// Sends HTTP Basic credentials with every request for the targets it returns them for, up front,
/// so no challenge round trip is needed. If the server still refuses them, the 401 comes back as a
/// response (on Linux too, where an unanswered challenge would otherwise hang).
///
/// ```swift
/// let provider = Provider<API>(plugins: [.credentials { _ in ("user", "secret") }])
/// ```
public struct CredentialsPlugin: Plugin {
    private let credentials: @Sendable (any TargetType) -> (user: String, password: String)?

    /// Creates the plugin.
    /// - Parameter credentials: The user and password for a target, or `nil` for none.
    public init(credentials: @escaping @Sendable (any TargetType) -> (user: String, password: String)?) {
        self.credentials = credentials
    }

    /// ``PluginHooks/prepare`` alone.
    public var implementedHooks: PluginHooks { .prepare }

    public func prepare(_ request: consuming URLRequest, context: RequestContext) async throws -> URLRequest {
        guard let (user, password) = credentials(context.target) else { return request }
        var request = request
        let token = Data("\(user):\(password)".utf8).base64EncodedString()
        request.setValue("Basic \(token)", forHTTPHeaderField: "Authorization")
        return request
    }
}
