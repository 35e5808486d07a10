import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a ``ReplayTransport`` keeps out of its fixtures: secrets, replaced by ``placeholder``
/// before anything is written, and headers that change on every recording.
///
/// Requests are matched against a fixture after the same redaction, so a request whose token
/// changes between runs still finds its recorded answer.
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

    /// Header names (any case) whose values are replaced, in requests and responses. Default:
    /// `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, `X-API-Key`, `X-Auth-Token`,
    /// `X-Amz-Security-Token`.
    public var headers: Set<String>
    /// Query item names (any case) whose values are replaced in request URLs. Default: Courier's
    /// list of secret-looking names (`token`, `access_token`, `api_key`, `key`, `password`,
    /// `secret`, `client_secret`, `signature`, `sig`, `code`, `session`, …), the same the network
    /// logger redacts.
    public var queryItems: Set<String>
    /// Member names (any case, at any depth) whose values are replaced in JSON request and
    /// response bodies. Default: `password`, `access_token`, `refresh_token`, `id_token`,
    /// `client_secret`. A body with a replaced member is written re-encoded (keys sorted).
    public var jsonFields: Set<String>
    /// Response headers left out of fixtures because they change on every recording. Default: `Date`.
    public var volatileResponseHeaders: Set<String>
    /// Rewrites a request body before it is written (and before a request is matched). Default: `nil`.
    public var requestBody: (@Sendable (Data, URLRequest) -> Data)?
    /// Rewrites a response body before it is written. Default: `nil`.
    public var responseBody: (@Sendable (Data, URLRequest) -> Data)?

    /// Creates a redaction; every parameter has the default documented on its property.
    public init(
        headers: Set<String> = [
            "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token",
            "x-amz-security-token",
        ],
        queryItems: Set<String> = FixtureRedaction.secretQueryItems,
        jsonFields: Set<String> = ["password", "access_token", "refresh_token", "id_token", "client_secret"],
        volatileResponseHeaders: Set<String> = ["date"],
        requestBody: (@Sendable (Data, URLRequest) -> Data)? = nil,
        responseBody: (@Sendable (Data, URLRequest) -> Data)? = nil
    ) {
        self.headers = Set(headers.map { $0.lowercased() })
        self.queryItems = Set(queryItems.map { $0.lowercased() })
        self.jsonFields = Set(jsonFields.map { $0.lowercased() })
        self.volatileResponseHeaders = Set(volatileResponseHeaders.map { $0.lowercased() })
        self.requestBody = requestBody
        self.responseBody = responseBody
    }

    /// The defaults.
    public static let `default` = FixtureRedaction()

    /// Secret-looking query item names (lower-cased): the list `NetworkLoggerPlugin` redacts too.
    public static let secretQueryItems: Set<String> = Redaction.defaultSecretQueryItems

    /// Header fields as written: secrets replaced, sorted by name (then value) so a fixture is stable.
    func headerFields(_ fields: [String: String], dropping volatile: Set<String> = []) -> [HAR.NameValue] {
        fields.compactMap { name, value -> HAR.NameValue? in
            let key = name.lowercased()
            if volatile.contains(key) { return nil }
            return HAR.NameValue(name: name, value: headers.contains(key) ? Self.placeholder : value)
        }.sorted { ($0.name.lowercased(), $0.value) < ($1.name.lowercased(), $1.value) }
    }

    /// The URL as written: user info removed, secret query values replaced; the query keeps its order.
    func url(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.user = nil
        components.password = nil
        if let items = components.percentEncodedQueryItems {
            components.percentEncodedQueryItems = items.map { item in
                let name = (item.name.removingPercentEncoding ?? item.name).lowercased()
                guard item.value != nil, queryItems.contains(name) else { return item }
                return URLQueryItem(name: item.name, value: Self.placeholder)
            }
        }
        return components.url ?? url
    }

    /// A JSON body with secret members replaced (re-encoded), or the body as it is.
    func body(_ data: Data) -> Data {
        guard !jsonFields.isEmpty, let json = JSONValue.parse(data),
            let redacted = json.redacting(jsonFields, with: Self.placeholder)
        else { return data }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(redacted)) ?? data
    }

    /// The request as a fixture holds it (and as it is matched).
    func request(_ request: URLRequest, body: Data) -> (request: URLRequest, body: Data) {
        var redacted = request
        if let url = request.url { redacted.url = self.url(url) }
        var fields: [String: String] = [:]
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            fields[name] = headers.contains(name.lowercased()) ? Self.placeholder : value
        }
        redacted.allHTTPHeaderFields = fields
        var body = self.body(body)
        if let filter = requestBody { body = filter(body, request) }
        redacted.httpBody = body.isEmpty ? nil : body
        return (redacted, body)
    }
}
