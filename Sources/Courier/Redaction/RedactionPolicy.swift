import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which values are secret, and what replaces them: the one policy used wherever Courier writes a
/// request or a response down — ``NetworkLoggerPlugin``'s lines and CourierTesting's replay
/// fixtures.
///
/// Names are compared in any case style: `X-Api-Key`, `x_api_key`, `xApiKey` and `XAPIKEY` are
/// the same name (compared lower-cased, without `-` and `_`). A bracketed name counts by its
/// innermost key, so `user[password]` is a `password`.
///
/// Only the secret values change: the rest of a URL, a header or a body stays byte for byte (a
/// JSON body is not decoded and encoded again, so its numbers, white space and key order stay).
/// What is redacted:
/// - the values of ``headers``;
/// - in URLs (the request's, and the values of ``urlHeaders`` such as `Location`): the user info
///   (`user:password@`), and the values of ``queryItems`` in the query and in a fragment of
///   name-value pairs (`#access_token=…`);
/// - in bodies: the members named in ``bodyFields`` of JSON — also line by line in streamed
///   bodies (Server-Sent Events, NDJSON) — and the fields named in ``bodyFields`` or
///   ``queryItems`` of form-encoded bodies and of multipart forms' text parts.
///
/// ```swift
/// var policy = RedactionPolicy.default
/// policy.headers.insert("X-Tenant")
/// policy.bodyFields.insert("ssn")
/// policy.queryItems.remove("code")
/// let provider = Provider<API>(plugins: [.logger(.verbose, redaction: policy)])
/// ```
public struct RedactionPolicy: Sendable, Hashable {
    /// What replaces a secret value. Default: ``defaultPlaceholder``. Inside a URL it is
    /// percent-encoded where needed when the result must stay a URL.
    public var placeholder: String
    /// Headers whose values are secret. Default: ``defaultHeaders``.
    public var headers: Set<String> { didSet { headerKeys = Self.keys(headers) } }
    /// Query items (and fragment items, and form fields) whose values are secret. Default:
    /// ``defaultQueryItems``.
    public var queryItems: Set<String> { didSet { queryKeys = Self.keys(queryItems) } }
    /// JSON members, form fields and multipart text parts whose values are secret. Default:
    /// ``defaultBodyFields``.
    public var bodyFields: Set<String> { didSet { bodyKeys = Self.keys(bodyFields) } }
    /// Headers whose values are URLs, redacted as URLs. Default: ``defaultURLHeaders``.
    public var urlHeaders: Set<String> { didSet { urlHeaderKeys = Self.keys(urlHeaders) } }

    private var headerKeys: Set<String>
    private var queryKeys: Set<String>
    private var bodyKeys: Set<String>
    private var urlHeaderKeys: Set<String>

    /// `<redacted>`.
    public static let defaultPlaceholder = "<redacted>"

    /// Credential headers: `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`,
    /// `X-API-Key`, `Api-Key`, `X-Auth-Token`, `X-Access-Token`, `X-Refresh-Token`,
    /// `X-Session-Token`, `X-CSRF-Token`, `X-XSRF-Token`, `X-Amz-Security-Token`,
    /// `X-Goog-Api-Key`, `Private-Token`, `Job-Token`, `X-Gitlab-Token`, `X-Vault-Token`,
    /// `Ocp-Apim-Subscription-Key`, `X-Shopify-Access-Token`, `X-Hub-Signature`,
    /// `X-Hub-Signature-256`, `X-Auth-Key`, `X-Api-Token`, `DD-API-KEY`, `DD-APPLICATION-KEY` and
    /// `X-Algolia-API-Key`.
    public static let defaultHeaders: Set<String> = [
        "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-API-Key", "Api-Key", "X-Auth-Token",
        "X-Access-Token", "X-Refresh-Token", "X-Session-Token", "X-CSRF-Token", "X-XSRF-Token",
        "X-Amz-Security-Token", "X-Goog-Api-Key", "Private-Token", "Job-Token", "X-Gitlab-Token", "X-Vault-Token",
        "Ocp-Apim-Subscription-Key", "X-Shopify-Access-Token", "X-Hub-Signature", "X-Hub-Signature-256",
        "X-Auth-Key", "X-Api-Token", "DD-API-KEY", "DD-APPLICATION-KEY", "X-Algolia-API-Key",
    ]

    /// Secret-looking query items: `token`, `access_token`, `refresh_token`, `id_token`,
    /// `auth_token`, `private_token`, `session_token`, `jwt`, `api_key`, `key`, `password`,
    /// `passwd`, `pwd`, `secret`, `client_secret`, `client_assertion`, `assertion`, `signature`,
    /// `sig`, `auth`, `session`, `code`, `X-Amz-Signature`, `X-Amz-Credential`,
    /// `X-Amz-Security-Token`, `X-Goog-Signature`, `X-Goog-Credential`.
    public static let defaultQueryItems: Set<String> = [
        "token", "access_token", "refresh_token", "id_token", "auth_token", "private_token", "session_token", "jwt",
        "api_key", "key", "password", "passwd", "pwd", "secret", "client_secret", "client_assertion", "assertion",
        "signature", "sig", "auth", "session", "code", "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token",
        "X-Goog-Signature", "X-Goog-Credential",
    ]

    /// Secret-looking body members: `password`, `passwd`, `passphrase`, `secret`, `token`,
    /// `access_token`, `refresh_token`, `id_token`, `auth_token`, `session_token`,
    /// `private_token`, `api_key`, `client_secret`, `client_assertion`, `private_key`, `jwt`,
    /// `authorization` — in any case style, so `accessToken`, `apiKey` and `clientSecret` too.
    public static let defaultBodyFields: Set<String> = [
        "password", "passwd", "passphrase", "secret", "token", "access_token", "refresh_token", "id_token",
        "auth_token", "session_token", "private_token", "api_key", "client_secret", "client_assertion", "private_key",
        "jwt", "authorization",
    ]

    /// Headers whose values are URLs: `Location`, `Content-Location`, `Referer`.
    public static let defaultURLHeaders: Set<String> = ["Location", "Content-Location", "Referer"]

    /// Creates a policy; every parameter has the default documented on its property.
    /// - Parameters:
    ///   - placeholder: What replaces a secret. Default: ``defaultPlaceholder``.
    ///   - headers: Default: ``defaultHeaders``.
    ///   - queryItems: Default: ``defaultQueryItems``.
    ///   - bodyFields: Default: ``defaultBodyFields``.
    ///   - urlHeaders: Default: ``defaultURLHeaders``.
    public init(
        placeholder: String = RedactionPolicy.defaultPlaceholder, headers: Set<String> = RedactionPolicy.defaultHeaders,
        queryItems: Set<String> = RedactionPolicy.defaultQueryItems,
        bodyFields: Set<String> = RedactionPolicy.defaultBodyFields,
        urlHeaders: Set<String> = RedactionPolicy.defaultURLHeaders
    ) {
        self.placeholder = placeholder
        self.headers = headers
        self.queryItems = queryItems
        self.bodyFields = bodyFields
        self.urlHeaders = urlHeaders
        self.headerKeys = Self.keys(headers)
        self.queryKeys = Self.keys(queryItems)
        self.bodyKeys = Self.keys(bodyFields)
        self.urlHeaderKeys = Self.keys(urlHeaders)
    }

    /// The defaults, with `<redacted>` as the placeholder.
    public static let `default` = RedactionPolicy()

    // MARK: Names

    /// A name as the policy compares it: its innermost bracketed key (`user[password]` →
    /// `password`) that is not an index (`token[0]` → `token`, as PHP and Rails read it),
    /// lower-cased, without `-` and `_`.
    /// - Parameter name: A header, query item, form field or JSON member name.
    /// - Returns: The comparable form: `X-Api-Key`, `api_key` and `apiKey` all give `apikey`.
    public static func comparableName(_ name: some StringProtocol) -> String {
        var key = Substring(name)
        if key.last == "]" || key.contains("[") {
            let parts = key.split(whereSeparator: { $0 == "[" || $0 == "]" })
            let isIndex = { (part: Substring) in part.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
            key = parts.last(where: { !isIndex($0) }) ?? parts.last ?? key
        }
        return String(key.lowercased().filter { $0 != "-" && $0 != "_" })
    }

    private static func keys(_ names: Set<String>) -> Set<String> { Set(names.map { comparableName($0) }) }

    /// Whether `name`'s value is secret as a header.
    /// - Parameter name: The header's name, in any case style.
    /// - Returns: `true` when ``headers`` names it.
    public func isSecretHeader(_ name: String) -> Bool { headerKeys.contains(Self.comparableName(name)) }

    /// Whether `name`'s value is secret as a query or fragment item.
    /// - Parameter name: The item's name, percent-decoded, in any case style.
    /// - Returns: `true` when ``queryItems`` names it (or its innermost bracketed key).
    public func isSecretQueryItem(_ name: String) -> Bool { queryKeys.contains(Self.comparableName(name)) }

    /// Whether `name`'s value is secret as a JSON member.
    /// - Parameter name: The member's name, in any case style.
    /// - Returns: `true` when ``bodyFields`` names it.
    public func isSecretBodyField(_ name: String) -> Bool { bodyKeys.contains(Self.comparableName(name)) }

    /// Whether `name`'s value is secret as a form field or multipart part.
    /// - Parameter name: The field's name, percent-decoded, in any case style.
    /// - Returns: `true` when ``bodyFields`` or ``queryItems`` names it (or its innermost
    ///   bracketed key).
    public func isSecretFormField(_ name: String) -> Bool {
        let key = Self.comparableName(name)
        return bodyKeys.contains(key) || queryKeys.contains(key)
    }

    // MARK: Headers and URLs

    /// A header's value as it may be written: the placeholder for a secret header, the URL
    /// redacted for a URL-valued one, the value itself otherwise.
    /// - Parameters:
    ///   - value: The header's value.
    ///   - name: The header's name.
    /// - Returns: The value to write.
    public func headerValue(_ value: String, forHeader name: String) -> String {
        let key = Self.comparableName(name)
        if headerKeys.contains(key) { return placeholder }
        if urlHeaderKeys.contains(key) { return url(value) }
        return value
    }

    /// A URL held as text (it need not parse), with its user info and the values of secret query
    /// and fragment items replaced by the placeholder as it is (not percent-encoded): for text
    /// that people read.
    /// - Parameter text: The URL, absolute or relative.
    /// - Returns: The redacted text; the rest is unchanged.
    public func url(_ text: String) -> String {
        guard Self.mayHoldSecrets(text) else { return text }
        return redactURL(text, placeholder: placeholder)
    }

    /// The URL with its user info and the values of secret query and fragment items replaced by
    /// the placeholder, percent-encoded so that the result is still a URL.
    /// - Parameter url: The URL.
    /// - Returns: The redacted URL; the URL itself when the result would not parse.
    public func url(_ url: URL) -> URL {
        let text = url.absoluteString
        // A URL relative to a base is returned absolute, as the full reading returns it: its
        // base's query (`items/1` against `https://h/v1/?token=T`) is not in `absoluteString`,
        // and must not travel on in `baseURL` (found by review).
        guard Self.mayHoldSecrets(text) else { return url.baseURL == nil ? url : (URL(string: text) ?? url) }
        let safe = placeholder.addingPercentEncoding(withAllowedCharacters: Self.placeholderAllowed) ?? "redacted"
        return URL(string: redactURL(text, placeholder: safe)) ?? url
    }

    /// Whether `text` has an `@`, `?` or `#`: without one it has no user info, query or fragment,
    /// so nothing to redact. One pass over contiguous bytes (issue 29: the logger redacts each
    /// request's URL twice, and most URLs have none of the three; skipping the full reading below
    /// took ~7,000 instructions off each call for a short URL, 73,500 → 59,200 for the built-in
    /// plugins).
    static func mayHoldSecrets(_ text: String) -> Bool {
        func holds(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "@") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
        }
        if let found = text.utf8.withContiguousStorageIfAvailable({ $0.contains(where: holds) }) { return found }
        return text.utf8.contains(where: holds)
    }

    private static let placeholderAllowed = CharacterSet.urlQueryAllowed.subtracting(
        CharacterSet(charactersIn: "&=+#@:/?"))

    /// Read as UTF-8, the delimiters being ASCII, as a server reads them (issue 29: searching the
    /// text by `Character` and through Foundation's `range(of:)` cost ~51,000 instructions for a
    /// short URL, twice a request under `NetworkLoggerPlugin`). A URL with nothing to redact is
    /// returned as it is by both callers, which check ``mayHoldSecrets(_:)`` once before calling.
    ///
    /// The user info is found first, on the whole text (``userInfo(in:)``), even across a `?` or
    /// `#` (an unescaped `?` in a password, or one with a combining mark after it, hid the `@`
    /// behind a query: found by review). A query right after the host that holds an `@`
    /// (`https://host?email=a@b`) is hidden up to that `@`, the safe side of an ambiguous text, and
    /// what follows the `@` is still read as that query (or fragment).
    private func redactURL(_ text: String, placeholder: String) -> String {
        let bytes = text.utf8
        var written: String?
        var rest = bytes.startIndex
        // Where the text after the user info continues: the path, or a query or fragment the
        // user info's span began.
        var continues = UInt8(ascii: "/")
        if let (start, at) = Self.userInfo(in: bytes) {
            written = String(text[..<start]) + placeholder
            rest = at
            let span = bytes[start..<at]
            if span.contains(UInt8(ascii: "#")) {
                continues = UInt8(ascii: "#")
            } else if span.contains(UInt8(ascii: "?")) {
                continues = UInt8(ascii: "?")
            }
        }
        if let written, continues == UInt8(ascii: "#") {
            return written + redactFragment(text[rest...], placeholder: placeholder)
        }
        var end = bytes.endIndex
        var fragment: Substring?
        if let hash = bytes[rest...].firstIndex(of: UInt8(ascii: "#")) {
            fragment = text[bytes.index(after: hash)...]
            end = hash
        }
        var query: Substring?
        if continues == UInt8(ascii: "?") {
            query = text[rest..<end]
            end = rest
        } else if let mark = bytes[rest..<end].firstIndex(of: UInt8(ascii: "?")) {
            query = text[bytes.index(after: mark)..<end]
            end = mark
        }
        if written == nil, query == nil, fragment == nil { return text }
        var result = written ?? ""
        result += text[rest..<end]
        if let query {
            if continues == UInt8(ascii: "?") {
                // Either a query the `@` was in or the path after a password with a `?` in it
                // (`user:p?w@host/x?token=T`): a `?` ends a pair too, so both are read.
                result += redactPairs(query, placeholder: placeholder, isSecret: isSecretQueryItem, separators: "&?")
            } else {
                result += "?"
                result += redactPairs(query, placeholder: placeholder, isSecret: isSecretQueryItem)
            }
        }
        if let fragment {
            result += "#"
            result += redactFragment(fragment, placeholder: placeholder)
        }
        return result
    }

    /// `#access_token=…&state=…` (OAuth implicit grant) is read as pairs; a plain `#section` has no
    /// `=`. A client-side route's parameters come as pairs too, so in a fragment a pair ends at a
    /// `?`, `;` or `#` as well as at `&` (found by review: `#/cb?access_token=…`,
    /// `#/cb;x=1?access_token=…`, `#/callback#access_token=…` and `#access_token=…&state=/home?x`
    /// each wrote the token out, its name read as part of the route or the `?` taken for the
    /// route's). A secret value with one of those characters in it is hidden up to that character.
    private func redactFragment(_ fragment: Substring, placeholder: String) -> String {
        guard fragment.utf8.contains(UInt8(ascii: "=")) else { return String(fragment) }
        return redactPairs(fragment, placeholder: placeholder, isSecret: isSecretQueryItem, separators: "&?;#")
    }

    /// `name=value&…` with the values of secret names replaced; names are percent-decoded
    /// (and `+` read as a space) before they are compared. `separators`: the ASCII characters
    /// that end a pair (each written back as it was).
    func redactPairs(
        _ text: Substring, placeholder: String, isSecret: (String) -> Bool, separators: StaticString = "&"
    ) -> String {
        let ends = UnsafeBufferPointer(start: separators.utf8Start, count: separators.utf8CodeUnitCount)
        let bytes = text.utf8
        var result = ""
        var start = bytes.startIndex
        while true {
            let end = bytes[start...].firstIndex(where: { ends.contains($0) }) ?? bytes.endIndex
            let item = text[start..<end]
            if let equals = item.utf8.firstIndex(of: UInt8(ascii: "=")),
                isSecret(Self.decodedName(item.utf8[..<equals]))
            {
                result += item[..<equals]
                result += "="
                result += placeholder
            } else {
                result += item
            }
            guard end != bytes.endIndex else { return result }
            let next = bytes.index(after: end)
            result += text[end..<next]
            start = next
        }
    }

    /// A query or form item's name as a server reads it: `+` as a space, each valid `%XX` escape
    /// decoded on its own (one bad escape does not leave the rest encoded, so
    /// `user%5B%FF%5D%5Bpassword%5D` is still seen as `password`).
    static func decodedName(_ raw: some Collection<UInt8>) -> String {
        let spaced = raw.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }
        return String(decoding: PercentEncoding.lenientlyDecoded(spaced), as: UTF8.self)
    }

    /// Where the user info of `scheme://user:secret@host/…` starts and where the `@` that ends
    /// it is: the last `@` before the authority's end (the first `/` or `\\` after its start).
    /// `nil` when there is none, or when the user info is empty (`https://@host/` is left as it is).
    ///
    /// The authority starts after the first `://` that comes before any `?` or `#`; after a
    /// leading `//` (a network-path reference, `//user:pw@host/`); and, for the schemes browsers
    /// read as special (`http`, `https`, `ws`, `wss`, `ftp`), after `scheme:` and whatever slashes,
    /// backslashes, tabs and line breaks follow it (`https:/user:pw@host/`,
    /// `https:\\user:pw@host/`, found by review). The first of these starts with an `@` in
    /// its authority is used.
    private static func userInfo(in bytes: String.UTF8View) -> (start: String.Index, at: String.Index)? {
        func at(from start: String.Index?) -> String.Index? {
            guard let start else { return nil }
            let end = bytes[start...].firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") })
            return bytes[start..<(end ?? bytes.endIndex)].lastIndex(of: UInt8(ascii: "@"))
        }
        var found: (start: String.Index, at: String.Index)?
        if let start = specialAuthorityStart(in: bytes), let at = at(from: start) {
            found = (start, at)
        } else if let start = endOfSchemeSeparator(in: bytes), let at = at(from: start) {
            found = (start, at)
        }
        guard let found, found.at > found.start else { return nil }
        return found
    }

    /// Where the authority of a network-path reference or of a special scheme's URL starts.
    private static func specialAuthorityStart(in bytes: String.UTF8View) -> String.Index? {
        func isSlash(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "/") || byte == UInt8(ascii: "\\") || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }
        func afterSlashes(_ from: String.Index) -> String.Index {
            bytes[from...].firstIndex(where: { !isSlash($0) }) ?? bytes.endIndex
        }
        if bytes.starts(with: "//".utf8) { return afterSlashes(bytes.startIndex) }
        guard let colon = bytes.firstIndex(where: { !Self.isSchemeByte($0) }), bytes[colon] == UInt8(ascii: ":")
        else { return nil }
        let scheme = bytes[..<colon]
        func isScheme(_ name: StaticString) -> Bool {
            let name = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
            return scheme.count == name.count && zip(scheme, name).allSatisfy { ASCII.lowercased($0) == $1 }
        }
        guard isScheme("http") || isScheme("https") || isScheme("ws") || isScheme("wss") || isScheme("ftp")
        else { return nil }
        return afterSlashes(bytes.index(after: colon))
    }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// Where the first `://` in `bytes` ends, when it comes before any `?` or `#` (one in a
    /// query, `?next=https://…`, is not this URL's).
    private static func endOfSchemeSeparator(in bytes: String.UTF8View) -> String.Index? {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            switch bytes[index] {
            case UInt8(ascii: "?"), UInt8(ascii: "#"): return nil
            case UInt8(ascii: ":"):
                let after = bytes.index(after: index)
                if bytes[after...].starts(with: "//".utf8) { return bytes.index(after, offsetBy: 2) }
            default: break
            }
            index = bytes.index(after: index)
        }
        return nil
    }

    // MARK: Requests

    /// The request as it may be written: URL, headers and body (`httpBody`) redacted.
    /// - Parameter request: The request.
    /// - Returns: A copy with the secret values replaced.
    public func request(_ request: URLRequest) -> URLRequest {
        var redacted = request
        if let url = request.url { redacted.url = self.url(url) }
        if let fields = request.allHTTPHeaderFields {
            var written: [String: String] = [:]
            for (name, value) in fields { written[name] = headerValue(value, forHeader: name) }
            redacted.allHTTPHeaderFields = written
        }
        if let body = request.httpBody, !body.isEmpty {
            redacted.httpBody = self.body(body, contentType: request.value(forHTTPHeaderField: "Content-Type"))
        }
        return redacted
    }
}
