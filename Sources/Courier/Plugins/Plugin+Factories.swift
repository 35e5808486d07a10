import Foundation

extension Plugin where Self == NetworkLoggerPlugin {
    /// A ``NetworkLoggerPlugin``.
    /// - Parameters:
    ///   - options: What to log. Default: method, URL, status, retries and refreshes.
    ///   - redaction: What is secret. Default: ``RedactionPolicy/default``.
    ///   - redactedHeaders: Headers to redact besides `redaction`'s. Default: none.
    ///   - maxBodyBytes: Bodies are cut at this size. Default: 4096.
    ///   - responseBodyFormatter: Renders response bodies (``NetworkLoggerPlugin/prettyJSON(_:)``,
    ///     say); `nil` for the default. Default: `nil`.
    ///   - output: Where lines go. Default: standard error.
    /// - Returns: The plugin.
    public static func logger(
        _ options: NetworkLoggerPlugin.Options = .default, redaction: RedactionPolicy = .default,
        redactedHeaders: Set<String> = [],
        maxBodyBytes: Int = 4096, responseBodyFormatter: (@Sendable (Data, Response) -> String?)? = nil,
        output: @escaping @Sendable (String) -> Void = NetworkLoggerPlugin.standardError
    ) -> NetworkLoggerPlugin {
        NetworkLoggerPlugin(
            configuration: .init(
                options: options, redaction: redaction, redactedHeaders: redactedHeaders, maxBodyBytes: maxBodyBytes,
                responseBodyFormatter: responseBodyFormatter, output: output))
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

extension Plugin where Self == NetworkActivityPlugin {
    /// A ``NetworkActivityPlugin`` tracker.
    /// - Parameter onChange: Called when a request begins or ends.
    /// - Returns: The plugin.
    public static func networkActivity(
        _ onChange: @escaping @Sendable (NetworkActivityPlugin.Change, any TargetType) -> Void = { _, _ in }
    ) -> NetworkActivityPlugin {
        NetworkActivityPlugin(onChange: onChange)
    }
}
