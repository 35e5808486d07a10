import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Logs requests and responses through a closure you choose (standard error by default).
///
/// ```swift
/// let provider = Provider<API>(plugins: [.logger()])                      // method, URL, status
/// let verbose = Provider<API>(plugins: [.logger(.verbose, output: { logger.debug("\($0)") })])
/// ```
///
/// Secrets stay out of logs: `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie` and
/// any header you list are shown as `<redacted>`, and so are the user info of a URL
/// (`user:password@`) and the values of query items named in
/// ``Configuration/redactedQueryItems`` (`token`, `api_key`, `password`…), in every line: the
/// request line, the status line and the cURL rendering. Bodies are cut at
/// ``Configuration/maxBodyBytes``; a body that is not UTF-8 is summarized by its size.
public struct NetworkLoggerPlugin: Plugin {
    /// What to log.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// The request's method.
        public static let method = Options(rawValue: 1 << 0)
        /// The request's URL.
        public static let url = Options(rawValue: 1 << 1)
        /// The request's headers.
        public static let requestHeaders = Options(rawValue: 1 << 2)
        /// The request's body.
        public static let requestBody = Options(rawValue: 1 << 3)
        /// The response's status code (or the error).
        public static let responseStatus = Options(rawValue: 1 << 4)
        /// The response's body when the request succeeded.
        public static let successResponseBody = Options(rawValue: 1 << 5)
        /// The response's body when the request failed.
        public static let errorResponseBody = Options(rawValue: 1 << 6)
        /// The request as a `curl` command line.
        public static let cURL = Options(rawValue: 1 << 7)

        /// Method, URL and status.
        public static let `default`: Options = [.method, .url, .responseStatus]
        /// Everything but the cURL rendering.
        public static let verbose: Options = [
            .method, .url, .requestHeaders, .requestBody, .responseStatus, .successResponseBody,
            .errorResponseBody,
        ]
    }

    /// How the logger behaves.
    public struct Configuration: Sendable {
        /// The headers never logged in full.
        public static let defaultRedactedHeaders: Set<String> = [
            "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie",
        ]

        /// What to log. Default: ``Options/default``.
        public var options: Options
        /// The query items whose values are never logged: `token`, `access_token`,
        /// `refresh_token`, `id_token`, `api_key`, `apikey`, `key`, `password`, `passwd`, `secret`,
        /// `client_secret`, `signature`, `sig`, `auth`, `session` and `code`.
        public static let defaultRedactedQueryItems: Set<String> = Redaction.defaultSecretQueryItems

        /// Headers shown as `<redacted>` (matched without regard to case). Default:
        /// ``defaultRedactedHeaders``.
        public var redactedHeaders: Set<String>
        /// Query items whose values are shown as `<redacted>` (matched without regard to case).
        /// Default: ``defaultRedactedQueryItems``.
        public var redactedQueryItems: Set<String>
        /// Bodies longer than this many bytes are cut. Default: 4096.
        public var maxBodyBytes: Int
        /// Where lines go. Default: standard error.
        public var output: @Sendable (String) -> Void

        /// Creates a configuration.
        /// - Parameters:
        ///   - options: What to log. Default: ``Options/default``.
        ///   - redactedHeaders: Extra headers to redact, added to ``defaultRedactedHeaders``.
        ///   - redactedQueryItems: Extra query items to redact, added to
        ///     ``defaultRedactedQueryItems``.
        ///   - maxBodyBytes: Default: 4096.
        ///   - output: Where lines go. Default: standard error.
        public init(
            options: Options = .default, redactedHeaders: Set<String> = [], redactedQueryItems: Set<String> = [],
            maxBodyBytes: Int = 4096, output: @escaping @Sendable (String) -> Void = NetworkLoggerPlugin.standardError
        ) {
            self.options = options
            self.redactedHeaders = Self.defaultRedactedHeaders.union(redactedHeaders)
            self.redactedQueryItems = Self.defaultRedactedQueryItems.union(redactedQueryItems)
            self.maxBodyBytes = maxBodyBytes
            self.output = output
        }
    }

    /// The configuration.
    public let configuration: Configuration
    private let redacted: Set<String>
    private let redactedQuery: Set<String>

    /// Creates a logger.
    /// - Parameter configuration: What and where to log. Default: method, URL and status, to
    ///   standard error.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.redacted = Set(configuration.redactedHeaders.map { $0.lowercased() })
        self.redactedQuery = Set(configuration.redactedQueryItems.map { $0.lowercased() })
    }

    /// Writes a line to standard error.
    public static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    public func willSend(_ request: URLRequest, target: any TargetType) async {
        let options = configuration.options
        var lines: [String] = []
        var summary: [String] = ["→"]
        if options.contains(.method) { summary.append(request.httpMethod ?? "GET") }
        if options.contains(.url) { summary.append(request.url.map(describe) ?? "<no URL>") }
        if summary.count > 1 { lines.append(summary.joined(separator: " ")) }
        if options.contains(.requestHeaders) {
            for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
                lines.append("  \(name): \(redact(name, value))")
            }
        }
        if options.contains(.requestBody), let body = request.httpBody, !body.isEmpty {
            lines.append("  body: " + describe(body))
        }
        if options.contains(.cURL) { lines.append(cURL(for: request)) }
        if !lines.isEmpty { configuration.output(lines.joined(separator: "\n")) }
    }

    public func didReceive(_ result: Result<Response, CourierError>, target: any TargetType) async {
        let options = configuration.options
        var lines: [String] = []
        switch result {
        case .success(let response):
            if options.contains(.responseStatus) { lines.append(statusLine(response)) }
            if options.contains(.successResponseBody), !response.data.isEmpty {
                lines.append("  body: " + describe(response.data))
            }
        case .failure(let error):
            if options.contains(.responseStatus) {
                lines.append(error.response.map(statusLine) ?? "✗ \(error.localizedDescription)")
            }
            if options.contains(.errorResponseBody), let data = error.response?.data, !data.isEmpty {
                lines.append("  body: " + describe(data))
            }
        }
        if !lines.isEmpty { configuration.output(lines.joined(separator: "\n")) }
    }

    /// The request as a `curl` command, with secret headers redacted.
    /// - Parameter request: The request.
    /// - Returns: A command line for a POSIX shell.
    public func cURL(for request: URLRequest) -> String {
        var parts = ["curl"]
        let method = request.httpMethod ?? "GET"
        if method != "GET" { parts.append("-X \(Self.quote(method))") }
        for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            parts.append("-H \(Self.quote("\(name): \(redact(name, value))"))")
        }
        if let body = request.httpBody, !body.isEmpty {
            if let text = String(validating: body, as: UTF8.self) {
                parts.append("--data-binary \(Self.quote(text))")
            } else {
                parts.append("--data-binary '<\(body.count) bytes of binary data>'")
            }
        }
        parts.append(Self.quote(request.url.map(describe) ?? ""))
        return parts.joined(separator: " ")
    }

    private func statusLine(_ response: Response) -> String {
        let url =
            configuration.options.contains(.url)
            ? " " + ((response.request?.url ?? response.response?.url).map(describe) ?? "") : ""
        return "← \(response.statusCode)\(url) (\(response.data.count) bytes)"
    }

    /// The URL with its user info and secret query values redacted.
    private func describe(_ url: URL) -> String {
        Redaction.url(url, secretQueryItems: redactedQuery)
    }

    private func redact(_ name: String, _ value: String) -> String {
        redacted.contains(name.lowercased()) ? "<redacted>" : value
    }

    private func describe(_ body: Data) -> String {
        guard String(validating: body, as: UTF8.self) != nil else {
            return "<\(body.count) bytes, not UTF-8>"
        }
        let limit = max(0, configuration.maxBodyBytes)
        guard body.count > limit else { return String(decoding: body, as: UTF8.self) }
        // Cut on a character boundary.
        var cut = String(decoding: body.prefix(limit), as: UTF8.self)
        if cut.last == "\u{FFFD}" { cut.removeLast() }
        return cut + "… (\(body.count) bytes, cut at \(limit))"
    }

    /// Single-quotes for a POSIX shell: `'` becomes `'\''`.
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
