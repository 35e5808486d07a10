import Foundation

extension Plugin where Self == NetworkLogger {
    /// A ``NetworkLogger``.
    /// - Parameters:
    ///   - options: What to log. Default: method, URL and status.
    ///   - redactedHeaders: Headers to redact besides `Authorization`, `Proxy-Authorization`,
    ///     `Cookie` and `Set-Cookie`. Default: none.
    ///   - maxBodyBytes: Bodies are cut at this size. Default: 4096.
    ///   - output: Where lines go. Default: standard error.
    /// - Returns: The plugin.
    public static func logger(
        _ options: NetworkLogger.Options = .default, redactedHeaders: Set<String> = [],
        maxBodyBytes: Int = 4096, output: @escaping @Sendable (String) -> Void = NetworkLogger.standardError
    ) -> NetworkLogger {
        NetworkLogger(
            configuration: .init(
                options: options, redactedHeaders: redactedHeaders, maxBodyBytes: maxBodyBytes, output: output))
    }
}

extension Plugin where Self == AccessTokenPlugin {
    /// An ``AccessTokenPlugin``.
    /// - Parameter token: Returns the token for a target.
    /// - Returns: The plugin.
    public static func accessToken(
        _ token: @escaping @Sendable (any TargetType) async throws -> String
    ) -> AccessTokenPlugin {
        AccessTokenPlugin(token: token)
    }
}

extension Plugin where Self == CredentialsPlugin {
    /// A ``CredentialsPlugin``.
    /// - Parameter credentials: The user and password for a target, or `nil`.
    /// - Returns: The plugin.
    public static func credentials(
        _ credentials: @escaping @Sendable (any TargetType) -> (user: String, password: String)?
    ) -> CredentialsPlugin {
        CredentialsPlugin(credentials: credentials)
    }
}

extension Plugin where Self == NetworkActivity {
    /// A ``NetworkActivity`` tracker.
    /// - Parameter onChange: Called when a request begins or ends.
    /// - Returns: The plugin.
    public static func networkActivity(
        _ onChange: @escaping @Sendable (NetworkActivity.Change, any TargetType) -> Void = { _, _ in }
    ) -> NetworkActivity {
        NetworkActivity(onChange: onChange)
    }
}
