import Courier
import Foundation
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Plugin where Self == NetworkLoggerPlugin {
    /// A `NetworkLoggerPlugin` whose lines go to a swift-log `Logger`: one log entry per line the
    /// plugin writes (a request, a response, a retry, a refresh), with the same options and the same
    /// redaction as `NetworkLoggerPlugin`.
    ///
    /// ```swift
    /// let logger = Logger(label: "api")
    /// let provider = Provider<GitHub>(plugins: [.swiftLog(logger)])
    /// ```
    ///
    /// Nothing is formatted while `logger`'s level is above `level`: the plugin asks its copy of
    /// `logger` at the start of every hook (a log handler whose level can change, one shared
    /// with the rest of the app, starts the lines when it is turned down).
    ///
    /// Secrets never reach the logger: every line is written through `redaction` (credential headers,
    /// user info in URLs, secret query items and body fields are shown as `<redacted>`).
    ///
    /// - Parameters:
    ///   - logger: Where entries go.
    ///   - level: The level of every entry. Default: `.debug`.
    ///   - options: What to log. Default: method, URL, status, retries and refreshes, and the call's
    ///     number and target at the start of each line (`[#3 GitHub.user]`), so that lines of
    ///     concurrent calls can be told apart.
    ///   - redaction: What is secret. Default: `RedactionPolicy.default`.
    ///   - redactedHeaders: Headers to redact besides `redaction`'s. Default: none.
    ///   - redactedQueryItems: Query items to redact besides `redaction`'s. Default: none.
    ///   - maxBodyBytes: Bodies are cut at this size, after redaction. Default: 4096.
    ///   - requestBodyFormatter: Renders request bodies (already redacted); `nil` for the default.
    ///     Default: `nil`.
    ///   - responseBodyFormatter: Renders response bodies (already redacted), such as
    ///     `NetworkLoggerPlugin.prettyJSON(_:)`; `nil` for the default. Default: `nil`.
    /// - Returns: The plugin.
    public static func swiftLog(
        _ logger: Logger, level: Logger.Level = .debug,
        options: NetworkLoggerPlugin.Options = [.method, .url, .responseStatus, .retries, .target],
        redaction: RedactionPolicy = .default, redactedHeaders: Set<String> = [],
        redactedQueryItems: Set<String> = [], maxBodyBytes: Int = 4096,
        requestBodyFormatter: (@Sendable (Data, URLRequest) -> String?)? = nil,
        responseBodyFormatter: (@Sendable (Data, Response) -> String?)? = nil
    ) -> NetworkLoggerPlugin {
        NetworkLoggerPlugin(
            configuration: .init(
                options: options, redaction: redaction, redactedHeaders: redactedHeaders,
                redactedQueryItems: redactedQueryItems, maxBodyBytes: maxBodyBytes,
                requestBodyFormatter: requestBodyFormatter, responseBodyFormatter: responseBodyFormatter,
                output: { line in logger.log(level: level, "\(line)") },
                // The logger's level decides before any line is built: with the level off, a
                // request's headers and bodies are neither redacted nor formatted.
                isEnabled: { logger.logLevel <= level }))
    }
}
