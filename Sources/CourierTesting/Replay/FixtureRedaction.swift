import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a ``ReplayTransport`` keeps out of its fixtures: secrets, found by a `RedactionPolicy`
/// (the one `NetworkLoggerPlugin` uses too) and replaced by ``placeholder`` before anything is
/// written, and headers that change on every recording.
///
/// Only the secret values change: a redacted JSON body keeps its numbers, white space and key
/// order byte for byte, and a streamed body keeps the pieces it arrived in. Requests are matched
/// against a fixture after the same redaction, so a request whose token changes between runs
/// still finds its recorded answer.
///
/// ```swift
/// var redaction = FixtureRedaction.default
/// redaction.headers.insert("x-session")
/// redaction.jsonFields.insert("ssn")
/// redaction.responseBody = { body, _ in Data(String(decoding: body, as: UTF8.self)
///     .replacingOccurrences(of: "internal.example.com", with: "host").utf8) }
/// ```
public struct FixtureRedaction: Sendable {
    /// What replaces a secret: `REDACTED`.
    public static let placeholder = "REDACTED"

    /// What is secret. Default: `RedactionPolicy.default` with ``placeholder``.
    public var policy: RedactionPolicy
    /// Header names (any case style) whose values are replaced, in requests and responses: the
    /// ``policy``'s `headers`. Default: `RedactionPolicy.defaultHeaders` (`Authorization`,
    /// `Cookie`, `Set-Cookie`, `X-API-Key`, `Api-Key`, `X-Goog-Api-Key`, `Private-Token`, …).
    public var headers: Set<String> {
        get { policy.headers }
        set { policy.headers = newValue }
    }
    /// Query item names (any case style) whose values are replaced in URLs: the ``policy``'s
    /// `queryItems`. Default: `RedactionPolicy.defaultQueryItems` (`token`, `access_token`,
    /// `api_key`, `password`, `signature`, `X-Amz-Signature`, `X-Amz-Credential`, …).
    public var queryItems: Set<String> {
        get { policy.queryItems }
        set { policy.queryItems = newValue }
    }
    /// Member and field names (any case style, at any depth) whose values are replaced in JSON,
    /// form, multipart and streamed bodies: the ``policy``'s `bodyFields`. Default:
    /// `RedactionPolicy.defaultBodyFields` (`password`, `token`, `accessToken`, `refreshToken`,
    /// `apiKey`, `clientSecret`, `secret`, …).
    public var jsonFields: Set<String> {
        get { policy.bodyFields }
        set { policy.bodyFields = newValue }
    }
    /// Response headers left out of fixtures because they change on every recording. Default: `Date`.
    public var volatileResponseHeaders: Set<String>
    /// Rewrites a request body before it is written (and before a request is matched), after the
    /// secret fields are replaced; it also sees a compressed body (`Content-Encoding`), which is
    /// otherwise written as ``placeholder``. It may see a body it rewrote already (a recorded
    /// request is redacted again to be matched): make it give the same result twice. Default: `nil`.
    public var requestBody: (@Sendable (Data, URLRequest) -> Data)?
    /// Rewrites a response body before it is written. Default: `nil`.
    public var responseBody: (@Sendable (Data, URLRequest) -> Data)?

    /// Creates a redaction; every parameter has the default documented on its property.
    /// - Parameters:
    ///   - policy: What is secret. Default: `RedactionPolicy.default` with ``placeholder``.
    ///   - headers: When given, replaces the policy's headers.
    ///   - queryItems: When given, replaces the policy's query items.
    ///   - jsonFields: When given, replaces the policy's body fields.
    ///   - volatileResponseHeaders: Default: `Date`.
    ///   - requestBody: Default: `nil`.
    ///   - responseBody: Default: `nil`.
    public init(
        policy: RedactionPolicy = RedactionPolicy(placeholder: FixtureRedaction.placeholder),
        headers: Set<String>? = nil, queryItems: Set<String>? = nil, jsonFields: Set<String>? = nil,
        volatileResponseHeaders: Set<String> = ["date"],
        requestBody: (@Sendable (Data, URLRequest) -> Data)? = nil,
        responseBody: (@Sendable (Data, URLRequest) -> Data)? = nil
    ) {
        var policy = policy
        if let headers { policy.headers = headers }
        if let queryItems { policy.queryItems = queryItems }
        if let jsonFields { policy.bodyFields = jsonFields }
        self.policy = policy
        self.volatileResponseHeaders = Set(volatileResponseHeaders.map { $0.lowercased() })
        self.requestBody = requestBody
        self.responseBody = responseBody
    }

    /// The defaults.
    public static let `default` = FixtureRedaction()

    /// Secret-looking query item names: `RedactionPolicy.defaultQueryItems`, the list
    /// `NetworkLoggerPlugin` redacts too.
    public static let secretQueryItems: Set<String> = RedactionPolicy.defaultQueryItems

    /// Header fields as written: secrets replaced, sorted by name (then value) so a fixture is stable.
    func headerFields(_ fields: [String: String], dropping volatile: Set<String> = []) -> [HAR.NameValue] {
        fields.compactMap { name, value -> HAR.NameValue? in
            if volatile.contains(name.lowercased()) { return nil }
            return HAR.NameValue(name: name, value: policy.headerValue(value, forHeader: name))
        }.sorted { ($0.name.lowercased(), $0.value) < ($1.name.lowercased(), $1.value) }
    }

    /// The URL as written: user info and secret query values replaced; the query keeps its order.
    func url(_ url: URL) -> URL { policy.url(url) }

    /// A body with its secret values replaced in place, and the pieces it arrived in moved along.
    func body(_ data: Data, contentType: String?, chunks: [Int]? = nil) -> (body: Data, chunks: [Int]?) {
        let edits = policy.bodyEdits(data, contentType: contentType)
        guard !edits.isEmpty else { return (data, chunks) }
        return (RedactionPolicy.applying(edits, to: data), chunks.flatMap { RedactionPolicy.sizes($0, after: edits) })
    }

    /// The request as a fixture holds it (and as it is matched). A body with a `Content-Encoding`
    /// (request compression) is written as ``placeholder`` unless ``requestBody`` rewrites it: its
    /// secrets cannot be found in compressed bytes, and anyone could decompress it from the
    /// fixture. Found by review.
    func request(_ request: URLRequest, body: Data) -> (request: URLRequest, body: Data) {
        var redacted = request
        redacted.httpBody = nil
        redacted = policy.request(redacted)
        var body = body
        if let filter = requestBody {
            body = filter(self.body(body, contentType: request.value(forHTTPHeaderField: "Content-Type")).body, request)
        } else if !body.isEmpty, !ContentCoding.list(request.value(forHTTPHeaderField: "Content-Encoding")).isEmpty {
            body = Data(Self.placeholder.utf8)
        } else {
            body = self.body(body, contentType: request.value(forHTTPHeaderField: "Content-Type")).body
        }
        redacted.httpBody = body.isEmpty ? nil : body
        return (redacted, body)
    }
}
