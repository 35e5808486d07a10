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
/// Secrets stay out of logs: every line — the request line, headers, bodies, the status line and
/// the cURL rendering — is written through ``Configuration/redaction``, a ``RedactionPolicy``
/// (``RedactionPolicy/default`` unless you choose): credential headers, the user info of URLs
/// (`user:password@`), secret query and fragment items, URL-valued headers such as `Location`,
/// and secret members and fields of JSON, form, multipart and streamed bodies are shown as
/// `<redacted>`; everything else as it is. Bodies are cut at ``Configuration/maxBodyBytes`` after
/// redaction; a body that is not UTF-8 is summarized by its size.
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
        /// The response's headers (secret ones redacted, as for the request's).
        public static let responseHeaders = Options(rawValue: 1 << 8)
        /// Each line starts with the call's number and its target, `[#3 GitHub.user]`, so lines of
        /// concurrent calls can be told apart. The target is its type and case name, never its
        /// associated values (which may hold secrets).
        public static let target = Options(rawValue: 1 << 9)
        /// Retries (with the failure, the attempt and the wait) and credential refreshes.
        public static let retries = Options(rawValue: 1 << 10)

        /// Method, URL, status, retries and refreshes.
        public static let `default`: Options = [.method, .url, .responseStatus, .retries]
        /// Everything but the cURL rendering.
        public static let verbose: Options = [
            .method, .url, .requestHeaders, .requestBody, .responseStatus, .responseHeaders, .successResponseBody,
            .errorResponseBody, .retries, .target,
        ]
    }

    /// How the logger behaves.
    public struct Configuration: Sendable {
        /// The headers never logged in full: ``RedactionPolicy/defaultHeaders``.
        public static let defaultRedactedHeaders: Set<String> = RedactionPolicy.defaultHeaders

        /// What to log. Default: ``Options/default``.
        public var options: Options
        /// The query items whose values are never logged: ``RedactionPolicy/defaultQueryItems``.
        public static let defaultRedactedQueryItems: Set<String> = RedactionPolicy.defaultQueryItems

        /// What is secret in every line. Default: ``RedactionPolicy/default``.
        public var redaction: RedactionPolicy
        /// Headers shown as `<redacted>` (in any case style): ``redaction``'s
        /// ``RedactionPolicy/headers``. Default: ``defaultRedactedHeaders``.
        public var redactedHeaders: Set<String> {
            get { redaction.headers }
            set { redaction.headers = newValue }
        }
        /// Query items whose values are shown as `<redacted>` (in any case style): ``redaction``'s
        /// ``RedactionPolicy/queryItems``. Default: ``defaultRedactedQueryItems``.
        public var redactedQueryItems: Set<String> {
            get { redaction.queryItems }
            set { redaction.queryItems = newValue }
        }
        /// Bodies longer than this many bytes are cut. Default: 4096.
        public var maxBodyBytes: Int
        /// Where lines go. Default: standard error.
        public var output: @Sendable (String) -> Void
        /// Renders a request body for the log (say, pretty-printed JSON); `nil` falls back to the
        /// default rendering (UTF-8 text cut at ``maxBodyBytes``). It is given the body already
        /// redacted by ``redaction``. Default: `nil`.
        public var requestBodyFormatter: (@Sendable (Data, URLRequest) -> String?)?
        /// Renders a response body for the log; `nil` falls back to the default rendering. It is
        /// given the body already redacted by ``redaction``. Default: `nil`.
        /// ``NetworkLoggerPlugin/prettyJSON(_:)`` pretty-prints JSON.
        public var responseBodyFormatter: (@Sendable (Data, Response) -> String?)?
        /// Asked at the start of every hook; when it answers `false`, nothing is formatted,
        /// redacted or written for that hook (a logger whose level is off costs a call, not a
        /// line). `.swiftLog` asks its `Logger`'s level. Default: always `true`.
        public var isEnabled: @Sendable () -> Bool

        /// Creates a configuration.
        /// - Parameters:
        ///   - options: What to log. Default: ``Options/default``.
        ///   - redaction: What is secret. Default: ``RedactionPolicy/default``.
        ///   - redactedHeaders: Extra headers to redact, added to `redaction`'s. Default: none.
        ///   - redactedQueryItems: Extra query items to redact, added to `redaction`'s. Default: none.
        ///   - maxBodyBytes: Default: 4096.
        ///   - requestBodyFormatter: Renders request bodies; `nil` for the default. Default: `nil`.
        ///   - responseBodyFormatter: Renders response bodies; `nil` for the default. Default: `nil`.
        ///   - output: Where lines go. Default: standard error.
        ///   - isEnabled: Whether to log at all, asked at the start of every hook. Default: always.
        public init(
            options: Options = .default, redaction: RedactionPolicy = .default, redactedHeaders: Set<String> = [],
            redactedQueryItems: Set<String> = [],
            maxBodyBytes: Int = 4096, requestBodyFormatter: (@Sendable (Data, URLRequest) -> String?)? = nil,
            responseBodyFormatter: (@Sendable (Data, Response) -> String?)? = nil,
            output: @escaping @Sendable (String) -> Void = NetworkLoggerPlugin.standardError,
            isEnabled: @escaping @Sendable () -> Bool = { true }
        ) {
            self.options = options
            var redaction = redaction
            redaction.headers.formUnion(redactedHeaders)
            redaction.queryItems.formUnion(redactedQueryItems)
            self.redaction = redaction
            self.maxBodyBytes = maxBodyBytes
            self.requestBodyFormatter = requestBodyFormatter
            self.responseBodyFormatter = responseBodyFormatter
            self.output = output
            self.isEnabled = isEnabled
        }
    }

    /// The configuration.
    public let configuration: Configuration
    private var policy: RedactionPolicy { configuration.redaction }

    /// Creates a logger.
    /// - Parameter configuration: What and where to log. Default: method, URL and status, to
    ///   standard error.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Writes a line to standard error.
    public static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Pretty-prints a JSON body with sorted keys (for ``Configuration/responseBodyFormatter`` or
    /// ``Configuration/requestBodyFormatter``); `nil` for a body that is not JSON.
    public static func prettyJSON(_ body: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
            let pretty = try? JSONSerialization.data(
                withJSONObject: object,
                options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        else { return nil }
        return String(decoding: pretty, as: UTF8.self)
    }

    /// ``PluginHooks/willSend`` and ``PluginHooks/didReceive``, and the two that announce a
    /// retry and a refresh when the options include `.retries`.
    public var implementedHooks: PluginHooks {
        configuration.options.contains(.retries)
            ? [.willSend, .didReceive, .willRetry, .willRefreshCredential] : [.willSend, .didReceive]
    }

    public func willSend(_ request: URLRequest, context: RequestContext) async {
        guard configuration.isEnabled() else { return }
        let options = configuration.options
        var lines: [String] = []
        // One string, not an array joined (issue 29: the line is written for every request).
        var summary = "→"
        if options.contains(.method) { summary += " " + (request.httpMethod ?? "GET") }
        if options.contains(.url) { summary += " " + (request.url.map(describe) ?? "<no URL>") }
        if options.contains(.method) || options.contains(.url) { lines.append(summary) }
        if options.contains(.requestHeaders) {
            for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
                lines.append("  \(name): \(redact(name, value))")
            }
        }
        if options.contains(.requestBody), let body = describeBody(of: request, task: context.target.task) {
            lines.append("  body: " + body)
        }
        if options.contains(.cURL) { lines.append(cURL(for: request)) }
        emit(lines, context)
    }

    public func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {
        guard configuration.isEnabled() else { return }
        let options = configuration.options
        var lines: [String] = []
        switch result {
        case .success(let response):
            if options.contains(.responseStatus) { lines.append(statusLine(response)) }
            if options.contains(.responseHeaders) { lines += headerLines(response) }
            if options.contains(.successResponseBody), !response.data.isEmpty {
                lines.append("  body: " + describe(response.data, of: response))
            }
        case .failure(let error):
            if options.contains(.responseStatus) {
                lines.append(error.response.map(statusLine) ?? "✗ \(error.localizedDescription)")
            }
            if options.contains(.responseHeaders), let response = error.response { lines += headerLines(response) }
            if options.contains(.errorResponseBody), let response = error.response, !response.data.isEmpty {
                lines.append("  body: " + describe(response.data, of: response))
            }
        }
        emit(lines, context)
    }

    public func willRetry(
        _ request: URLRequest, after error: CourierError, delay: Duration, context: RequestContext
    ) async {
        guard configuration.options.contains(.retries), configuration.isEnabled() else { return }
        let cause = error.response.map { "status \($0.statusCode)" } ?? error.localizedDescription
        emit(["↻ attempt \(context.attempt) failed (\(cause)); attempt \(context.attempt + 1) in \(delay)"], context)
    }

    public func willRefreshCredential(_ request: URLRequest, context: RequestContext) async {
        guard configuration.options.contains(.retries), configuration.isEnabled() else { return }
        let url = configuration.options.contains(.url) ? " for " + (request.url.map(describe) ?? "<no URL>") : ""
        emit(["↻ the credential was refused\(url); refreshing it, then sending again"], context)
    }

    /// Sends the lines out as one entry, each prefixed with the call when asked.
    private func emit(_ lines: [String], _ context: RequestContext) {
        guard !lines.isEmpty else { return }
        guard configuration.options.contains(.target) else {
            // A single line as it is: no joined copy (the default options write one per hook).
            configuration.output(lines.count == 1 ? lines[0] : lines.joined(separator: "\n"))
            return
        }
        let prefix = "[#\(context.id.sequence) \(context.targetName)] "
        configuration.output(lines.count == 1 ? prefix + lines[0] : lines.map { prefix + $0 }.joined(separator: "\n"))
    }

    private func headerLines(_ response: Response) -> [String] {
        let fields = response.response?.allHeaderFields ?? [:]
        return fields.compactMap { key, value -> (String, String)? in
            guard let name = key as? String else { return nil }
            return (name, "\(value)")
        }
        .sorted { $0.0.lowercased() < $1.0.lowercased() }
        .map { "  \($0.0): \(redact($0.0, $0.1))" }
    }

    /// The request's body as the log shows it: its bytes, or what it is when it is not in the
    /// request (a file, a multipart form, a stream), with its size when known.
    private func describeBody(of request: URLRequest, task: HTTPTask) -> String? {
        if let body = request.httpBody, !body.isEmpty {
            let redacted = policy.body(body, contentType: request.value(forHTTPHeaderField: "Content-Type"))
            return configuration.requestBodyFormatter?(redacted, request) ?? describe(redacted)
        }
        let length = request.value(forHTTPHeaderField: "Content-Length").map { ", \($0) bytes" } ?? ""
        switch task {
        case .uploadFile(let file, _):
            let size = try? FileBody.regularFileSize(file)
            return "file \(file.lastPathComponent)" + (size.map { " (\($0) bytes)" } ?? "")
        case .uploadMultipart(let form, _):
            return "multipart form, \(form.parts.count) part\(form.parts.count == 1 ? "" : "s")\(length)"
        default:
            return request.httpBodyStream != nil ? "stream\(length)" : nil
        }
    }

    private func describe(_ body: Data, of response: Response) -> String {
        let redacted = policy.body(body, contentType: response.value(forHTTPHeaderField: "Content-Type"))
        return configuration.responseBodyFormatter?(redacted, response) ?? describe(redacted)
    }

    /// The request as a `curl` command, redacted by ``Configuration/redaction``.
    /// - Parameter request: The request.
    /// - Returns: A command line for a POSIX shell.
    public func cURL(for request: URLRequest) -> String {
        var parts = ["curl"]
        let method = request.httpMethod ?? "GET"
        if method != "GET" { parts.append("-X \(Self.quote(method))") }
        for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            parts.append("-H \(Self.quote("\(name): \(redact(name, value))"))")
        }
        if let raw = request.httpBody, !raw.isEmpty {
            let body = policy.body(raw, contentType: request.value(forHTTPHeaderField: "Content-Type"))
            if let text = UTF8Text.string(body) {
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
        // HTTP cache (issue 26): where a response came from, unless the network.
        let origin = response.cacheStatus == .network ? "" : " [\(response.cacheStatus)]"
        return "← \(response.statusCode)\(url) (\(response.data.count) bytes)\(origin)"
    }

    /// The URL with its user info and secret query values redacted.
    private func describe(_ url: URL) -> String {
        policy.url(url.absoluteString)
    }

    private func redact(_ name: String, _ value: String) -> String {
        policy.headerValue(value, forHeader: name)
    }

    private func describe(_ body: Data) -> String {
        guard UTF8Text.string(body) != nil else {
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
