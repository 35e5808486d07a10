import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// RFC 9111's rules for a private cache, as pure functions of the request, the stored response
/// and the time: what may be stored, how old a stored response is, whether it is fresh, how to
/// revalidate it and what a `304` changes. ``HTTPCache`` runs what these decide.
enum CacheRules {
    /// Status codes that may be stored without explicit freshness (RFC 9110 §15.1), except 206
    /// (Courier stores no partial content).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Statuses that count as an error for `stale-if-error` (RFC 5861 §4).
    static let errorStatuses: Set<Int> = [500, 502, 503, 504]

    /// Methods that change the server's state: a success invalidates stored responses (RFC 9111 §4.4).
    static func isUnsafe(_ method: String) -> Bool {
        !["GET", "HEAD", "OPTIONS", "TRACE"].contains(method.uppercased())
    }

    /// The storage key of a `GET` for `url`: the method and the URL without its fragment. `nil`
    /// for a URL that is not `http` or `https`.
    static func key(for url: URL) -> String? {
        if let key = plainKey(for: url.absoluteString) { return key }
        return normalizedKey(for: url)
    }

    /// The key of a URL whose text is already in the key's form, read off its text (issue 29:
    /// through `URLComponents`, whose host setter runs IDNA, the key was ~17,000 instructions of
    /// every cached request): ASCII, no fragment, a lowercase `http` or `https` scheme and an
    /// authority without capitals, escapes or brackets. `nil` for anything else, which
    /// ``normalizedKey(for:)`` reads; both give one key for one URL.
    static func plainKey(for text: String) -> String? {
        let bytes = text.utf8
        let scheme: Int
        if bytes.starts(with: "https://".utf8) {
            scheme = 8
        } else if bytes.starts(with: "http://".utf8) {
            scheme = 7
        } else {
            return nil
        }
        var inAuthority = true
        for (offset, byte) in bytes.enumerated() {
            if byte >= 0x80 || byte == UInt8(ascii: "#") { return nil }
            guard inAuthority, offset >= scheme else { continue }
            switch byte {
            case UInt8(ascii: "/"), UInt8(ascii: "?"): inAuthority = false
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "%"), UInt8(ascii: "["), UInt8(ascii: "]"):
                return nil
            default: continue
            }
        }
        return "GET " + text
    }

    /// The key through `URLComponents`: scheme and host lowercased, the fragment dropped.
    static func normalizedKey(for url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return nil }
        components.fragment = nil
        components.scheme = scheme
        components.host = components.host?.lowercased()
        guard let string = components.string else { return nil }
        return "GET " + string
    }

    /// Whether a response may be stored (RFC 9111 §3), for a private cache.
    /// `credentials`: the request fields that carry credentials (``Limits/credentialHeaders``).
    static func isStorable(
        request: URLRequest, statusCode: Int, headers: [String: String], policy: CachePolicy,
        credentials: Set<String> = Limits.defaultCredentialHeaders
    ) -> Bool {
        guard (request.httpMethod ?? "GET").uppercased() == "GET", statusCode >= 200, statusCode != 206,
            statusCode != 304
        else { return false }
        let directives = CacheControl(header("Cache-Control", in: headers))
        if directives.noStore || !mayStore(for: request, policy: policy, credentials: credentials) { return false }
        if varyNames(header("Vary", in: headers)) == nil { return false }
        let explicit =
            directives.maxAge != nil || header("Expires", in: headers) != nil || directives.isPublic
            || directives.isPrivate
        return explicit || heuristicallyCacheable.contains(statusCode)
    }

    /// Whether the request lets its answer be stored: no `no-store` of its own, and no credentials
    /// (`Authorization`, a `Cookie`, an API key: any of `credentials`) unless the policy stores
    /// authorized responses. Checked for a `304`'s freshened entry too.
    static func mayStore(for request: URLRequest, policy: CachePolicy, credentials: Set<String>) -> Bool {
        if CacheControl(request.value(forHTTPHeaderField: "Cache-Control")).noStore { return false }
        return policy.storesAuthorizedResponses || credentialFields(of: request, credentials: credentials).isEmpty
    }

    /// The request's credential fields, names lowercased, sorted by name: `Authorization`, the
    /// default ``Limits/credentialHeaders`` and the call's own. A name removed from the call's
    /// (to keep it across a redirect the caller trusts) still counts here: it is a credential
    /// all the same (found by review).
    static func credentialFields(of request: URLRequest, credentials: Set<String>) -> [(String, String)] {
        var fields: [(String, String)] = []
        for (name, value) in request.allHTTPHeaderFields ?? [:] where isCredential(name, credentials: credentials) {
            fields.append((name.lowercased(), value))
        }
        return fields.sorted { $0.0 < $1.0 }
    }

    /// ``Limits/defaultCredentialHeaders`` and `Authorization`, lowercased.
    private static let defaultCredentialNames = Set(
        (Limits.defaultCredentialHeaders + ["Authorization"]).map { $0.lowercased() })

    /// Whether the field `name` (any case) carries credentials: a default credential name or one
    /// of the call's `credentials`.
    static func isCredential(_ name: String, credentials: Set<String>) -> Bool {
        defaultCredentialNames.contains(name.lowercased())
            || credentials.contains { ASCII.equalIgnoringCase($0, name) }
    }

    /// The name a stored response's credential digest is kept under in
    /// ``CachedResponse/varyDigests``: not a header name (a space is not allowed in one).
    static let credentialsKey = " credentials"

    /// One digest of all the request's credential fields, `"-"` for none: a stored response
    /// answers the same credentials only, never another user's, and one stored without any never
    /// answers a request that has some (found by review: only `Authorization` was looked at, and
    /// an entry stored without it answered any). Hashed: no secret is written down.
    static func credentialDigest(of request: URLRequest, credentials: Set<String>) -> String {
        let fields = credentialFields(of: request, credentials: credentials)
        guard !fields.isEmpty else { return "-" }
        var text = ""
        for (name, value) in fields { text += name + ":" + value + "\n" }
        return hex(SHA256.hash(Data(text.utf8)))
    }

    /// The request header names a response varies on, lowercased; `nil` for `Vary: *`, which no
    /// later request matches, and for a `Vary` naming more than ``CacheControl/maxDirectives``
    /// fields (not read past that bound, so a later request could not be matched on all of them).
    static func varyNames(_ vary: String?) -> [String]? {
        guard let vary else { return [] }
        var names: [String] = []
        let parts = vary.split(separator: ",", maxSplits: CacheControl.maxDirectives)
        if parts.count > CacheControl.maxDirectives { return nil }
        for part in parts {
            let name = part.trimmingWhitespace().lowercased()
            if name == "*" { return nil }
            if !name.isEmpty, !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// A digest of each varying header's value in `request` (`"-"` when absent): what a later
    /// request must match. Values are hashed, so a secret in one (a token) is not written down.
    static func varyDigests(names: [String], request: URLRequest) -> [String: String] {
        var digests: [String: String] = [:]
        for name in names {
            guard let value = request.value(forHTTPHeaderField: name) else {
                digests[name] = "-"
                continue
            }
            // Whitespace around list members does not change the value (RFC 9111 §4.1).
            let normalized = value.split(separator: ",").map { $0.trimmingWhitespace() }
                .joined(separator: ",")
            digests[name] = hex(SHA256.hash(Data(normalized.utf8)))
        }
        return digests
    }

    /// Whether `request` matches the stored response's `Vary` (RFC 9111 §4.1) and its credentials
    /// (``credentialDigest(of:credentials:)``).
    /// `ignoringCredentials`: whether it would match but for the credentials (such a response
    /// may be revalidated with the request's own credentials and its strong `ETag`, never answer
    /// it unasked).
    static func matchesVary(
        _ entry: CachedResponse, request: URLRequest, ignoringCredentials: Bool = false,
        credentials: Set<String> = Limits.defaultCredentialHeaders
    ) -> Bool {
        guard let names = varyNames(entry.header("Vary")) else { return false }
        if ignoringCredentials {
            func isCredential(_ name: String) -> Bool {
                name == credentialsKey || Self.isCredential(name, credentials: credentials)
            }
            return varyDigests(names: names.filter { !isCredential($0) }, request: request)
                == entry.varyDigests.filter { !isCredential($0.key) }
        }
        // An entry kept without a credential digest (stored by an earlier version, or made by
        // hand) was stored for a request without credentials.
        var stored = entry.varyDigests
        if stored[credentialsKey] == nil { stored[credentialsKey] = "-" }
        return storedDigests(names: names, request: request, credentials: credentials) == stored
    }

    /// The digests a stored response is kept with for `request`: its `Vary` names', and the
    /// credentials' under ``credentialsKey``; `nil` for `Vary: *`.
    static func storedDigests(
        vary: String?, request: URLRequest, credentials: Set<String> = Limits.defaultCredentialHeaders
    ) -> [String: String]? {
        guard let names = varyNames(vary) else { return nil }
        return storedDigests(names: names, request: request, credentials: credentials)
    }

    private static func storedDigests(
        names: [String], request: URLRequest, credentials: Set<String>
    ) -> [String: String] {
        var digests = varyDigests(names: names, request: request)
        digests[credentialsKey] = credentialDigest(of: request, credentials: credentials)
        return digests
    }

    /// How long the response is fresh for, in seconds (RFC 9111 §4.2.1): `max-age`, else
    /// `Expires` − `Date`, else 10% of the time since `Last-Modified` for heuristically cacheable
    /// statuses, at most `heuristicCap`. `s-maxage` is for shared caches and is ignored.
    /// `directives`: the entry's `Cache-Control`, when the caller has parsed it already.
    static func freshnessLifetime(
        _ entry: CachedResponse, heuristicCap: TimeInterval, directives: CacheControl? = nil
    ) -> TimeInterval {
        let directives = directives ?? CacheControl(entry.header("Cache-Control"))
        if let maxAge = directives.maxAge { return TimeInterval(maxAge) }
        let date = HTTPDate.parse(entry.header("Date")) ?? entry.responseTime
        if let expires = entry.header("Expires") {
            // An invalid Expires (such as "0") means already expired (RFC 9111 §5.3).
            guard let expiry = HTTPDate.parse(expires) else { return 0 }
            return max(0, expiry.timeIntervalSince(date))
        }
        if heuristicallyCacheable.contains(entry.statusCode),
            let lastModified = HTTPDate.parse(entry.header("Last-Modified"))
        {
            return min(max(0, date.timeIntervalSince(lastModified)) * 0.1, max(0, heuristicCap))
        }
        return 0
    }

    /// The response's current age in seconds (RFC 9111 §4.2.3).
    static func currentAge(_ entry: CachedResponse, now: Date) -> TimeInterval {
        let date = HTTPDate.parse(entry.header("Date")) ?? entry.responseTime
        let apparentAge = max(0, entry.responseTime.timeIntervalSince(date))
        // A list (repeated fields, joined): its first member (RFC 9111 §5.1), empty members
        // skipped (RFC 9110 §5.6.1). Read whole, it was no number and ignored, so an answer a day
        // old counted as new.
        let firstAge = entry.header("Age").flatMap { CacheControl.split($0, maxSplits: 1).first }
        let ageValue = firstAge.flatMap { CacheControl.deltaSeconds($0) }.map(TimeInterval.init) ?? 0
        let responseDelay = max(0, entry.responseTime.timeIntervalSince(entry.requestTime))
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        let residentTime = max(0, now.timeIntervalSince(entry.responseTime))
        return correctedInitialAge + residentTime
    }

    /// What to do with a request for which `entry` is stored (or nothing is).
    enum Decision: Equatable {
        /// Answer with the stored response, without the network; `age` is its current age
        /// (``currentAge(_:now:)`` at the decision's `now`), computed once: for a fresh hit, the
        /// freshness check's age is the answer's `Age` (issue 29: computing it again cost ~1,300
        /// instructions a hit).
        case answer(CachedResponse, age: TimeInterval)
        /// Send `request` (conditional when it carries validators); keep `stored` for a `304`
        /// or an error.
        case send(URLRequest, stored: CachedResponse?)
        /// Nothing usable, and the network may not be used.
        case miss
    }

    /// Decides from the stored response, the request's own directives and the policy.
    static func decide(
        _ request: URLRequest, stored: CachedResponse?, mode: CachePolicy.Mode, now: Date, heuristicCap: TimeInterval,
        credentials: Set<String> = Limits.defaultCredentialHeaders
    ) -> Decision {
        let usable = stored.flatMap { matchesVary($0, request: request, credentials: credentials) ? $0 : nil }
        switch mode {
        case .networkOnly:
            return .send(request, stored: nil)
        case .cacheFirst:
            return usable.map { .answer($0, age: currentAge($0, now: now)) } ?? .send(request, stored: nil)
        case .cacheOnly:
            return usable.map { .answer($0, age: currentAge($0, now: now)) } ?? .miss
        case .protocolRules, .staleWhileOffline:
            break
        }
        // A request with validators or a range of its own is the caller's: it gets the server's
        // answer as is.
        let own = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Range"]
        // One pass over the request's fields, not six case-insensitive look-ups through
        // FoundationNetworking (issue 29: a request on a cache hit usually has none of them).
        let fields = request.allHTTPHeaderFields ?? [:]
        if fields.keys.contains(where: { name in own.contains { ASCII.equalIgnoringCase($0, name) } }) {
            return .send(request, stored: nil)
        }
        // Read off the same fields, not by two more look-ups through FoundationNetworking (~130
        // instructions on a cache hit, measured: small, but exact).
        let requestDirectives = requestCacheControl(fields: fields)
        guard let usable else {
            if requestDirectives.onlyIfCached { return .miss }
            // Stored for other credentials: never an answer, but this request's own credentials
            // may revalidate it by its strong `ETag` alone (after a token refresh, a 304 naming
            // that tag says the representation is byte for byte the same). Not by a date or a
            // weak tag, which a server may match for another user's different answer (found by
            // review): those send the request plain.
            if let stored, let tag = strongETag(of: stored),
                matchesVary(stored, request: request, ignoringCredentials: true, credentials: credentials)
            {
                var conditional = request
                conditional.setValue(tag, forHTTPHeaderField: "If-None-Match")
                return .send(conditional, stored: stored)
            }
            return .send(request, stored: nil)
        }
        let directives = CacheControl(usable.header("Cache-Control"))
        let age = currentAge(usable, now: now)
        let fresh =
            freshnessLifetime(usable, heuristicCap: heuristicCap, directives: directives) > age && !directives.noCache
            && !requestDirectives.noCache && requestDirectives.maxAge.map { age <= TimeInterval($0) } ?? true
        if fresh { return .answer(usable, age: age) }
        if requestDirectives.onlyIfCached { return .miss }
        return .send(conditional(request, for: usable), stored: usable)
    }

    /// The request's `Cache-Control`, with `Pragma: no-cache` read as `no-cache` when there is none.
    static func requestCacheControl(_ request: URLRequest) -> CacheControl {
        requestCacheControl(fields: request.allHTTPHeaderFields ?? [:])
    }

    /// ``requestCacheControl(_:)`` of a request whose header fields are `fields`.
    static func requestCacheControl(fields: [String: String]) -> CacheControl {
        if let value = header("Cache-Control", in: fields) { return CacheControl(value) }
        var directives = CacheControl(nil)
        if header("Pragma", in: fields)?.lowercased().contains("no-cache") == true {
            directives.noCache = true
        }
        return directives
    }

    /// `request` with `If-None-Match` from the stored `ETag` and `If-Modified-Since` from its
    /// `Last-Modified` (RFC 9111 §4.3.1); unchanged when it has neither.
    static func conditional(_ request: URLRequest, for entry: CachedResponse) -> URLRequest {
        var request = request
        if let etag = entry.header("ETag"), isSafeHeaderValue(etag) {
            request.setValue(etag, forHTTPHeaderField: "If-None-Match")
        }
        if let lastModified = entry.header("Last-Modified"), isSafeHeaderValue(lastModified) {
            request.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
        }
        return request
    }

    /// The stored response's strong `ETag`, when it has one fit to send.
    static func strongETag(of entry: CachedResponse) -> String? {
        guard let tag = entry.header("ETag")?.trimmingWhitespace(), tag.hasPrefix("\""),
            isSafeHeaderValue(tag)
        else { return nil }
        return tag
    }

    /// Whether a `304` names the stored response's strong `ETag`: what revalidating a response
    /// stored for other credentials needs.
    static func confirms(_ entry: CachedResponse, notModified headers: [String: String]) -> Bool {
        guard let stored = strongETag(of: entry) else { return false }
        return header("ETag", in: headers)?.trimmingWhitespace() == stored
    }

    /// Whether the request sent was made conditional by the cache.
    static func isConditional(_ request: URLRequest) -> Bool {
        request.value(forHTTPHeaderField: "If-None-Match") != nil
            || request.value(forHTTPHeaderField: "If-Modified-Since") != nil
    }

    private static func isSafeHeaderValue(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 8_192 && !value.utf8.contains { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }
    }

    /// Header fields a `304` never replaces in the stored response (RFC 9111 §3.2, §4.3.4), and
    /// `Set-Cookie`, which the cache never keeps.
    static let notUpdated: Set<String> = [
        "content-length", "connection", "keep-alive", "transfer-encoding", "te", "upgrade", "proxy-connection",
        "set-cookie", "set-cookie2",
    ]

    /// Whether a `304` is about `entry` (RFC 9111 §4.3.4): the `ETag` it names is the entry's (a
    /// strong one compared strongly, a weak one weakly: a `W/"x"` does not freshen a body stored
    /// as `W/"y"`; found by review), and the `Last-Modified` it names, if any, is the entry's.
    static func selects(_ entry: CachedResponse, notModified headers: [String: String]) -> Bool {
        if let tag = header("ETag", in: headers)?.trimmingWhitespace() {
            guard let stored = entry.header("ETag")?.trimmingWhitespace() else { return false }
            if !tag.hasPrefix("W/") { return stored == tag }
            func opaque(_ tag: String) -> Substring { tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag) }
            return opaque(stored) == opaque(tag)
        }
        if let modified = HTTPDate.parse(header("Last-Modified", in: headers)),
            let stored = HTTPDate.parse(entry.header("Last-Modified")), modified != stored
        {
            return false
        }
        return true
    }

    /// The stored response freshened by a `304`'s headers (RFC 9111 §4.3.4), with the new times.
    static func merging(
        _ entry: CachedResponse, notModified headers: [String: String], requestTime: Date, responseTime: Date
    ) -> CachedResponse {
        var merged = entry
        for (name, value) in headers where !notUpdated.contains(name.lowercased()) {
            set(name, to: value, in: &merged.headers)
        }
        // A 304 without `Date` or `Age`: the stored ones describe the old answer, and kept with
        // the new times they made the freshened entry as old as the first one (stale at once).
        // A recipient adds the `Date` it lacks (RFC 9110 §6.6.1). Found by review.
        if header("Date", in: headers) == nil { set("Date", to: HTTPDate.format(responseTime), in: &merged.headers) }
        if header("Age", in: headers) == nil { set("Age", to: nil, in: &merged.headers) }
        merged.requestTime = requestTime
        merged.responseTime = responseTime
        return merged
    }

    /// The headers a response is stored with: without `Set-Cookie` and hop-by-hop fields.
    static func storedHeaders(_ headers: [String: String]) -> [String: String] {
        headers.filter { !notUpdated.contains($0.key.lowercased()) || $0.key.lowercased() == "content-length" }
    }

    /// Whether a stale stored response may answer after the network failed (RFC 9111 §4.2.4,
    /// RFC 5861). `offline`: no response arrived at all (not an error status).
    static func mayServeStale(
        _ entry: CachedResponse, request: URLRequest, mode: CachePolicy.Mode, offline: Bool, now: Date,
        heuristicCap: TimeInterval, credentials: Set<String> = Limits.defaultCredentialHeaders
    ) -> Bool {
        let directives = CacheControl(entry.header("Cache-Control"))
        if directives.mustRevalidate || directives.noCache { return false }
        // Stored for other credentials (kept only to be revalidated): never served unasked.
        if !matchesVary(entry, request: request, credentials: credentials) { return false }
        if offline, mode == .staleWhileOffline { return true }
        let allowance = max(directives.staleIfError ?? -1, requestCacheControl(request).staleIfError ?? -1)
        guard allowance >= 0 else { return false }
        let staleness = currentAge(entry, now: now) - freshnessLifetime(entry, heuristicCap: heuristicCap)
        return staleness <= TimeInterval(allowance)
    }

    /// The URLs whose stored responses a response to an unsafe request invalidates (RFC 9111 §4.4):
    /// the target, and `Location` and `Content-Location` when they have the same origin. Empty
    /// for safe methods and for responses that are not 2xx or 3xx.
    static func invalidated(
        method: String, url: URL, statusCode: Int, location: String?, contentLocation: String?
    ) -> [URL] {
        guard isUnsafe(method), (200..<400).contains(statusCode) else { return [] }
        var urls = [url]
        for value in [location, contentLocation] {
            guard let value, value.utf8.count <= 8_192, let other = URL(string: value, relativeTo: url)?.absoluteURL,
                sameOrigin(other, url)
            else { continue }
            urls.append(other)
        }
        return urls
    }

    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && effectivePort(a) == effectivePort(b)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }

    /// Sets the field `name` in `headers` to `value` (`nil`: removes it), whatever the case of the
    /// names already there.
    static func set(_ name: String, to value: String?, in headers: inout [String: String]) {
        for existing in headers.keys where ASCII.equalIgnoringCase(existing, name) {
            headers[existing] = nil
        }
        if let value { headers[name] = value }
    }

    /// The value of the field `name` in `headers`, matched without regard to case: the exact name
    /// first, which is how almost every stored or built field is spelled.
    static func header(_ name: String, in headers: [String: String]) -> String? {
        if let value = headers[name] { return value }
        return headers.first { ASCII.equalIgnoringCase($0.key, name) }?.value
    }

    static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count * 2)
        for byte in data {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
