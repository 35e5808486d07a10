import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// RFC 9111's rules for a private cache, as tables: no storage, no tasks, no clock but a date.
@Suite struct CacheRulesTests {
    static let url = URL(string: "https://api.example.com/items?page=1")!
    /// The time the stored responses arrived.
    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)

    static func http(_ date: Date) -> String {
        // IMF-fixdate by hand, the inverse of HTTPDate.parse (checked by `httpDates`).
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    static func entry(
        _ headers: [String: String], status: Int = 200, requestTime: Date = t0, responseTime: Date = t0,
        vary: [String: String] = [:]
    ) -> CachedResponse {
        CachedResponse(
            url: url, statusCode: status, headers: headers, body: Data("stored".utf8), requestTime: requestTime,
            responseTime: responseTime, varyDigests: vary)
    }

    static func request(_ headers: [String: String] = [:], method: String = "GET") -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    @Test func httpDates() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.parse(Self.http(Self.t0)) == Self.t0)
        for invalid in [
            "0", "-1", "", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT", String(repeating: "a", count: 10_000), "Sun, 06 Nov 1994 25:00:00 GMT",
        ] {
            #expect(HTTPDate.parse(invalid) == nil, "\(invalid.prefix(40))")
        }
    }

    struct Freshness: Sendable, CustomTestStringConvertible {
        var name: String
        var headers: [String: String]
        var status = 200
        var lifetime: TimeInterval
        var testDescription: String { name }
    }

    static let freshness: [Freshness] = [
        Freshness(name: "max-age", headers: ["Cache-Control": "max-age=60"], lifetime: 60),
        Freshness(name: "s-maxage is for shared caches", headers: ["Cache-Control": "s-maxage=600"], lifetime: 0),
        Freshness(
            name: "max-age wins over s-maxage", headers: ["Cache-Control": "s-maxage=600, max-age=60"], lifetime: 60),
        Freshness(
            name: "Expires minus Date",
            headers: ["Expires": http(t0.addingTimeInterval(120)), "Date": http(t0)], lifetime: 120),
        Freshness(
            name: "max-age wins over Expires",
            headers: ["Cache-Control": "max-age=10", "Expires": http(t0.addingTimeInterval(120))], lifetime: 10),
        Freshness(name: "invalid Expires is expired", headers: ["Expires": "0"], lifetime: 0),
        Freshness(
            name: "Expires before Date", headers: ["Expires": http(t0.addingTimeInterval(-50)), "Date": http(t0)],
            lifetime: 0),
        Freshness(name: "malformed max-age is stale", headers: ["Cache-Control": "max-age=abc"], lifetime: 0),
        Freshness(name: "negative max-age is stale", headers: ["Cache-Control": "max-age=-5"], lifetime: 0),
        Freshness(
            name: "huge max-age is capped", headers: ["Cache-Control": "max-age=999999999999999999999999"],
            lifetime: 2_147_483_648),
        Freshness(name: "quoted max-age", headers: ["Cache-Control": "max-age=\"30\""], lifetime: 30),
        // Repeated with another value (two fields joined): stale, whichever comes first (RFC 9111
        // §4.2.1); the last one won.
        Freshness(
            name: "max-age repeated with another value is stale",
            headers: ["Cache-Control": "max-age=0, max-age=86400"], lifetime: 0),
        Freshness(
            name: "max-age repeated, the larger first, is stale",
            headers: ["Cache-Control": "max-age=86400,max-age=60"], lifetime: 0),
        Freshness(
            name: "max-age repeated with a malformed one is stale",
            headers: ["Cache-Control": "max-age=600, public, max-age=ten"], lifetime: 0),
        Freshness(
            name: "max-age repeated with the same value", headers: ["Cache-Control": "max-age=60, MAX-AGE=\"60\""],
            lifetime: 60),
        Freshness(
            name: "heuristic: 10% of the time since Last-Modified",
            headers: ["Last-Modified": http(t0.addingTimeInterval(-1_000)), "Date": http(t0)], lifetime: 100),
        Freshness(
            name: "heuristic is capped",
            headers: ["Last-Modified": http(t0.addingTimeInterval(-100 * 86_400)), "Date": http(t0)],
            lifetime: 86_400),
        Freshness(
            name: "no heuristic for a 302", headers: ["Last-Modified": http(t0.addingTimeInterval(-1_000))],
            status: 302, lifetime: 0),
        Freshness(
            name: "heuristic for a 404", headers: ["Last-Modified": http(t0.addingTimeInterval(-1_000))],
            status: 404, lifetime: 100),
        Freshness(name: "nothing", headers: [:], lifetime: 0),
    ]

    @Test(arguments: freshness) func freshnessLifetime(_ row: Freshness) {
        let entry = Self.entry(row.headers, status: row.status)
        #expect(CacheRules.freshnessLifetime(entry, heuristicCap: 86_400) == row.lifetime)
    }

    @Test func ageFollowsRFC9111Section4_2_3() {
        // Date 10 s before the response arrived (apparent age 10), Age 5 plus 2 s in flight (7):
        // the corrected initial age is 10; 30 s resident makes 40.
        let entry = Self.entry(
            ["Date": Self.http(Self.t0.addingTimeInterval(-10)), "Age": "5"],
            requestTime: Self.t0.addingTimeInterval(-2))
        #expect(CacheRules.currentAge(entry, now: Self.t0.addingTimeInterval(30)) == 40)
        // Age larger than the apparent age wins.
        let aged = Self.entry(["Date": Self.http(Self.t0), "Age": "100"], requestTime: Self.t0.addingTimeInterval(-1))
        #expect(CacheRules.currentAge(aged, now: Self.t0) == 101)
        // A Date in the future makes no negative age; an invalid Age is ignored.
        let future = Self.entry(["Date": Self.http(Self.t0.addingTimeInterval(500)), "Age": "x"])
        #expect(CacheRules.currentAge(future, now: Self.t0.addingTimeInterval(3)) == 3)
    }

    /// Every answer the decision gives carries the entry's current age at the decision's `now`,
    /// fresh or not (`cacheFirst` and `cacheOnly` answer a stale entry too): the hit's `Age` is
    /// the one the freshness check used, computed once.
    @Test(arguments: [CachePolicy.Mode.protocolRules, .cacheFirst, .cacheOnly])
    func anAnswerCarriesTheAgeItWasDecidedWith(mode: CachePolicy.Mode) {
        let entry = Self.entry(["Date": Self.http(Self.t0), "Age": "30", "Cache-Control": "max-age=60"])
        for elapsed in [0.0, 20, 100] {
            let now = Self.t0.addingTimeInterval(elapsed)
            let decision = CacheRules.decide(Self.request(), stored: entry, mode: mode, now: now, heuristicCap: 86_400)
            let expected = CacheRules.currentAge(entry, now: now)
            #expect(expected == 30 + elapsed)
            if mode == .protocolRules && expected >= 60 {
                guard case .send = decision else {
                    Issue.record("a stale entry under protocol rules was answered: \(decision)")
                    continue
                }
            } else {
                #expect(decision == .answer(entry, age: expected))
            }
        }
    }

    /// `Age` sent twice (two fields, joined into a list): its first member counts (RFC 9111 §5.1).
    /// The list was no number and was ignored: a response a day old counted as new, and its
    /// `max-age` started again.
    @Test(arguments: [
        ("86400, 86400", 86_400.0), ("86400,5", 86_400), (" 300 , x", 300), ("x, 300", 0), (",300", 300),
        (" , \t,300", 300), (",", 0),
    ])
    func aListOfAgesCountsItsFirstMember(age: String, expected: TimeInterval) {
        let entry = Self.entry(["Date": Self.http(Self.t0), "Age": age, "Cache-Control": "max-age=3600"])
        #expect(CacheRules.currentAge(entry, now: Self.t0) == expected)
        let fresh = expected < 3600
        let decision = CacheRules.decide(
            Self.request(), stored: entry, mode: .protocolRules, now: Self.t0, heuristicCap: 86_400)
        #expect((decision == .answer(entry, age: expected)) == fresh)
    }

    struct Storable: Sendable, CustomTestStringConvertible {
        var name: String
        var method = "GET"
        var status = 200
        var request: [String: String] = [:]
        var response: [String: String] = [:]
        var policy = CachePolicy.protocolRules
        var storable: Bool
        var testDescription: String { name }
    }

    static let storable: [Storable] = [
        Storable(name: "200 without directives (heuristically cacheable)", storable: true),
        Storable(name: "POST", method: "POST", response: ["Cache-Control": "max-age=60"], storable: false),
        Storable(name: "HEAD", method: "HEAD", storable: false),
        Storable(name: "no-store in the response", response: ["Cache-Control": "no-store"], storable: false),
        Storable(name: "no-store in the request", request: ["Cache-Control": "no-store"], storable: false),
        Storable(name: "private is fine for a private cache", response: ["Cache-Control": "private"], storable: true),
        Storable(name: "no-cache is stored (and revalidated)", response: ["Cache-Control": "no-cache"], storable: true),
        Storable(name: "302 without freshness", status: 302, storable: false),
        Storable(name: "302 with max-age", status: 302, response: ["Cache-Control": "max-age=5"], storable: true),
        Storable(name: "404", status: 404, storable: true),
        Storable(name: "500", status: 500, storable: false),
        Storable(name: "206", status: 206, response: ["Cache-Control": "max-age=60"], storable: false),
        Storable(name: "Vary: *", response: ["Vary": "*"], storable: false),
        Storable(name: "Vary: Accept", response: ["Vary": "Accept"], storable: true),
        Storable(name: "Authorization", request: ["Authorization": "Bearer secret"], storable: false),
        Storable(
            name: "Authorization, target opts in", request: ["Authorization": "Bearer secret"],
            policy: CachePolicy.protocolRules.storingAuthorizedResponses(), storable: true),
    ]

    @Test(arguments: storable) func storability(_ row: Storable) {
        #expect(
            CacheRules.isStorable(
                request: Self.request(row.request, method: row.method), statusCode: row.status,
                headers: row.response, policy: row.policy) == row.storable)
    }

    enum Expected: Sendable, Equatable {
        case answer, send(conditional: Bool, keepsStored: Bool), miss
    }

    struct Decision: Sendable, CustomTestStringConvertible {
        var name: String
        var stored: [String: String]?
        var storedVary: [String: String] = [:]
        var request: [String: String] = [:]
        var mode = CachePolicy.Mode.protocolRules
        var age: TimeInterval = 30
        var expected: Expected
        var testDescription: String { name }
    }

    static let decisions: [Decision] = [
        Decision(name: "nothing stored", stored: nil, expected: .send(conditional: false, keepsStored: false)),
        Decision(name: "fresh", stored: ["Cache-Control": "max-age=60"], expected: .answer),
        Decision(
            name: "stale with an ETag", stored: ["Cache-Control": "max-age=10", "ETag": "\"v1\""],
            expected: .send(conditional: true, keepsStored: true)),
        Decision(
            name: "stale without validators (kept for stale-if-error)", stored: ["Cache-Control": "max-age=10"],
            expected: .send(conditional: false, keepsStored: true)),
        Decision(
            name: "no-cache always revalidates", stored: ["Cache-Control": "max-age=600, no-cache", "ETag": "\"v1\""],
            expected: .send(conditional: true, keepsStored: true)),
        Decision(
            name: "request no-cache", stored: ["Cache-Control": "max-age=600", "ETag": "\"v1\""],
            request: ["Cache-Control": "no-cache"], expected: .send(conditional: true, keepsStored: true)),
        Decision(
            name: "request Pragma: no-cache", stored: ["Cache-Control": "max-age=600", "ETag": "\"v1\""],
            request: ["Pragma": "no-cache"], expected: .send(conditional: true, keepsStored: true)),
        Decision(
            name: "request cache-control in lowercase", stored: ["Cache-Control": "max-age=600", "ETag": "\"v1\""],
            request: ["cache-control": "no-cache"], expected: .send(conditional: true, keepsStored: true)),
        Decision(
            name: "request PRAGMA in capitals", stored: ["Cache-Control": "max-age=600", "ETag": "\"v1\""],
            request: ["PRAGMA": "No-Cache"], expected: .send(conditional: true, keepsStored: true)),
        Decision(
            name: "request only-if-cached, nothing usable", stored: nil,
            request: ["cache-control": "only-if-cached"], expected: .miss),
        Decision(
            name: "request max-age below the age", stored: ["Cache-Control": "max-age=600", "ETag": "\"v1\""],
            request: ["Cache-Control": "max-age=5"], expected: .send(conditional: true, keepsStored: true)),
        Decision(
            name: "request with its own validator", stored: ["Cache-Control": "max-age=600", "ETag": "\"v1\""],
            request: ["If-None-Match": "\"mine\""], expected: .send(conditional: true, keepsStored: false)),
        Decision(
            name: "Vary matches", stored: ["Cache-Control": "max-age=60", "Vary": "Accept"],
            storedVary: [
                "accept": CacheRules.varyDigests(names: ["accept"], request: request(["Accept": "a/b"]))["accept"]!
            ],
            request: ["Accept": "a/b"], expected: .answer),
        Decision(
            name: "Vary differs", stored: ["Cache-Control": "max-age=60", "Vary": "Accept"],
            storedVary: ["accept": "-"], request: ["Accept": "a/b"],
            expected: .send(conditional: false, keepsStored: false)),
        Decision(
            name: "Vary: * never matches", stored: ["Cache-Control": "max-age=60", "Vary": "*"],
            expected: .send(conditional: false, keepsStored: false)),
        Decision(
            name: "cache first, stale", stored: ["Cache-Control": "max-age=1"], mode: .cacheFirst, expected: .answer),
        Decision(
            name: "cache first, nothing", stored: nil, mode: .cacheFirst,
            expected: .send(conditional: false, keepsStored: false)),
        Decision(name: "cache only, stale", stored: ["Cache-Control": "no-store"], mode: .cacheOnly, expected: .answer),
        Decision(name: "cache only, nothing", stored: nil, mode: .cacheOnly, expected: .miss),
        Decision(
            name: "network only, fresh", stored: ["Cache-Control": "max-age=600"], mode: .networkOnly,
            expected: .send(conditional: false, keepsStored: false)),
        Decision(
            name: "only-if-cached, stale", stored: ["Cache-Control": "max-age=1"],
            request: ["Cache-Control": "only-if-cached"], expected: .miss),
    ]

    @Test(arguments: decisions) func decide(_ row: Decision) {
        let stored = row.stored.map { Self.entry($0, vary: row.storedVary) }
        let request = Self.request(row.request)
        let decision = CacheRules.decide(
            request, stored: stored, mode: row.mode, now: Self.t0.addingTimeInterval(row.age), heuristicCap: 86_400)
        switch (decision, row.expected) {
        case (.answer, .answer), (.miss, .miss): break
        case (.send(let sent, let kept), .send(let conditional, let keepsStored)):
            #expect((sent.value(forHTTPHeaderField: "If-None-Match") != nil) == conditional)
            #expect((kept != nil) == keepsStored)
        default: Issue.record("decided \(decision), expected \(row.expected)")
        }
    }

    /// The request's own directives are found whatever the names' case, including names kept as
    /// given (`allHTTPHeaderFields` assigned whole keeps them on Linux, where `setValue`
    /// capitalizes them).
    @Test func theRequestsDirectivesAreFoundInAnyCase() {
        #expect(CacheRules.requestCacheControl(fields: ["cache-control": "no-cache"]).noCache)
        #expect(CacheRules.requestCacheControl(fields: ["CACHE-CONTROL": "max-age=5"]).maxAge == 5)
        #expect(CacheRules.requestCacheControl(fields: ["pragma": "No-Cache"]).noCache)
        #expect(!CacheRules.requestCacheControl(fields: ["pragma": "no-cache", "Cache-Control": "max-age=9"]).noCache)
        #expect(!CacheRules.requestCacheControl(fields: ["X-Pragma": "no-cache"]).noCache)
        var request = URLRequest(url: Self.url)
        request.allHTTPHeaderFields = ["cache-control": "no-cache"]
        let stored = Self.entry(["Cache-Control": "max-age=600", "ETag": "\"v1\""])
        let decision = CacheRules.decide(
            request, stored: stored, mode: .protocolRules, now: Self.t0.addingTimeInterval(30), heuristicCap: 86_400)
        guard case .send(let sent, stored: let kept) = decision else {
            Issue.record("a fresh entry answered a request that said no-cache: \(decision)")
            return
        }
        #expect(kept == stored)
        #expect(sent.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
    }

    @Test func conditionalRequestUsesTheStoredValidators() {
        let entry = Self.entry(["ETag": "W/\"v1\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"])
        let request = CacheRules.conditional(Self.request(), for: entry)
        #expect(request.value(forHTTPHeaderField: "If-None-Match") == "W/\"v1\"")
        #expect(request.value(forHTTPHeaderField: "If-Modified-Since") == "Sun, 06 Nov 1994 08:49:37 GMT")
        // A validator that could split a header is never sent.
        let hostile = CacheRules.conditional(Self.request(), for: Self.entry(["ETag": "\"a\"\r\nX-Evil: 1"]))
        #expect(hostile.value(forHTTPHeaderField: "If-None-Match") == nil)
    }

    @Test func notModifiedUpdatesTheStoredHeaders() {
        let entry = Self.entry([
            "Cache-Control": "max-age=10", "ETag": "\"v1\"", "Content-Length": "6", "Content-Type": "text/plain",
        ])
        let later = Self.t0.addingTimeInterval(100)
        let merged = CacheRules.merging(
            entry,
            notModified: [
                "cache-control": "max-age=300", "Content-Length": "0", "Set-Cookie": "s=1", "X-New": "yes",
                "Connection": "close",
            ], requestTime: later, responseTime: later)
        #expect(merged.header("Cache-Control") == "max-age=300")
        #expect(merged.headers.keys.filter { $0.lowercased() == "cache-control" }.count == 1)
        #expect(merged.header("Content-Length") == "6")
        #expect(merged.header("Content-Type") == "text/plain")
        #expect(merged.header("X-New") == "yes")
        #expect(merged.header("Set-Cookie") == nil)
        #expect(merged.header("Connection") == nil)
        #expect(merged.body == entry.body)
        #expect(merged.responseTime == later)
        #expect(
            CacheRules.storedHeaders(["Set-Cookie": "s=1", "Content-Length": "3", "A": "b"]).keys.sorted() == [
                "A", "Content-Length",
            ])
    }

    @Test func unsafeMethodsInvalidateSameOriginURLs() {
        let url = URL(string: "https://api.example.com/items/1")!
        let invalidated = CacheRules.invalidated(
            method: "POST", url: url, statusCode: 201, location: "/items/2",
            contentLocation: "https://other.example.com/items/3")
        #expect(
            invalidated.map(\.absoluteString) == ["https://api.example.com/items/1", "https://api.example.com/items/2"])
        #expect(
            CacheRules.invalidated(method: "DELETE", url: url, statusCode: 204, location: nil, contentLocation: nil)
                == [url])
        #expect(
            CacheRules.invalidated(method: "PUT", url: url, statusCode: 500, location: nil, contentLocation: nil)
                .isEmpty)
        #expect(
            CacheRules.invalidated(method: "GET", url: url, statusCode: 200, location: nil, contentLocation: nil)
                .isEmpty)
        // Another port is another origin.
        #expect(
            CacheRules.invalidated(
                method: "PATCH", url: url, statusCode: 200, location: "https://api.example.com:8443/items/1",
                contentLocation: nil) == [url])
    }

    struct Stale: Sendable, CustomTestStringConvertible {
        var name: String
        var headers: [String: String]
        var request: [String: String] = [:]
        var mode = CachePolicy.Mode.protocolRules
        var offline = true
        var age: TimeInterval
        var allowed: Bool
        var testDescription: String { name }
    }

    static let stale: [Stale] = [
        Stale(
            name: "stale-if-error within", headers: ["Cache-Control": "max-age=10, stale-if-error=60"], age: 40,
            allowed: true),
        Stale(
            name: "stale-if-error past", headers: ["Cache-Control": "max-age=10, stale-if-error=60"], age: 100,
            allowed: false),
        Stale(
            name: "stale-if-error on a 5xx", headers: ["Cache-Control": "max-age=10, stale-if-error=60"],
            offline: false,
            age: 40, allowed: true),
        Stale(
            name: "request stale-if-error", headers: ["Cache-Control": "max-age=10"],
            request: ["Cache-Control": "stale-if-error=60"], age: 40, allowed: true),
        Stale(
            name: "must-revalidate forbids it",
            headers: ["Cache-Control": "max-age=10, stale-if-error=60, must-revalidate"],
            age: 40, allowed: false),
        Stale(name: "nothing allows it", headers: ["Cache-Control": "max-age=10"], age: 40, allowed: false),
        // Repeated with another value: no stale answer (the last value won).
        Stale(
            name: "stale-if-error repeated with another value",
            headers: ["Cache-Control": "max-age=10, stale-if-error=60, stale-if-error=86400"], age: 40,
            allowed: false),
        Stale(
            name: "stale-if-error repeated with the same value",
            headers: ["Cache-Control": "max-age=10, stale-if-error=60, stale-if-error=\"60\""], age: 40,
            allowed: true),
        Stale(
            name: "stale-if-error repeated with a malformed value",
            headers: ["Cache-Control": "max-age=10, stale-if-error=soon, stale-if-error=60"], age: 40,
            allowed: false),
        Stale(
            name: "stale while offline", headers: ["Cache-Control": "max-age=10"], mode: .staleWhileOffline,
            age: 100_000, allowed: true),
        Stale(
            name: "stale while offline is not for a 5xx", headers: ["Cache-Control": "max-age=10"],
            mode: .staleWhileOffline,
            offline: false, age: 100, allowed: false),
        Stale(
            name: "stale while offline respects must-revalidate",
            headers: ["Cache-Control": "max-age=10, must-revalidate"],
            mode: .staleWhileOffline, age: 100, allowed: false),
    ]

    @Test(arguments: stale) func servingStaleAfterAnError(_ row: Stale) {
        #expect(
            CacheRules.mayServeStale(
                Self.entry(row.headers), request: Self.request(row.request), mode: row.mode, offline: row.offline,
                now: Self.t0.addingTimeInterval(row.age), heuristicCap: 86_400) == row.allowed)
    }

    @Test func keysIgnoreTheFragmentAndHostCase() {
        #expect(
            CacheRules.key(for: URL(string: "https://API.example.com/a?b=1#frag")!)
                == "GET https://api.example.com/a?b=1")
        #expect(CacheRules.key(for: URL(string: "ftp://example.com/a")!) == nil)
    }

    /// A URL already in the key's form is keyed off its text (issue 29), with the key
    /// `URLComponents` gives; any other goes through `URLComponents`.
    @Test(arguments: [
        "https://api.example.com/v1/items/1", "http://127.0.0.1:8080/a?b=1&c=%20", "https://h.test",
        "https://h.test/?", "https://user:pw@h.test:443/p;x?q=A#f", "https://H.test/A", "HTTP://h.test/",
        "https://[::1]:8/x", "https://h%41.test/", "https://xn--bcher-kva.example/%C3%A4", "http:///nohost",
        "https://h.test/a/../b/./c?X=Y",
    ])
    func plainKeysAreTheKeysURLComponentsGives(text: String) throws {
        let url = try #require(URL(string: text))
        let normalized = CacheRules.normalizedKey(for: url)
        if let plain = CacheRules.plainKey(for: url.absoluteString) {
            #expect(plain == normalized)
        }
        #expect(CacheRules.key(for: url) == normalized)
        let plainForm = [
            "https://api.example.com/v1/items/1", "http://127.0.0.1:8080/a?b=1&c=%20", "https://h.test",
            "https://h.test/?", "https://xn--bcher-kva.example/%C3%A4", "http:///nohost",
            "https://h.test/a/../b/./c?X=Y",
        ]
        #expect((CacheRules.plainKey(for: url.absoluteString) != nil) == plainForm.contains(text))
    }

    @Test func hostileCacheControlIsBounded() {
        let huge = Array(repeating: "no-store", count: 100_000).joined(separator: ",") + ",max-age=5"
        let directives = CacheControl(huge)
        #expect(directives.noStore)
        #expect(directives.maxAge == nil)  // past the directives read
        // More fields than are read: the response cannot be matched on all of them, so it is not stored.
        #expect(CacheRules.varyNames(String(repeating: "a,", count: 100_000)) == nil)
    }

    /// Commas inside a quoted argument do not split directives (RFC 9110 §5.6.4): read before as a
    /// clean `max-age=86400`, so the answer was fresh for a day though no directive said so.
    @Test(arguments: [
        (#"private="a,max-age=86400,b""#, Int?.none, true),
        (#"no-cache="Set-Cookie, max-age=86400", max-age=60"#, 60, false),
        (#"x="a\"b, max-age=86400", max-age=5"#, 5, false),
        (#"max-age=30, private="unterminated, max-age=86400"#, 30, true),
    ])
    func commasInsideQuotesSplitNothing(header: String, maxAge: Int?, isPrivate: Bool) {
        let directives = CacheControl(header)
        #expect(directives.maxAge == maxAge)
        #expect(directives.isPrivate == isPrivate)
    }

    /// The quote-aware split keeps `split(separator:maxSplits:)`'s shape: empty members out, the
    /// remainder after `maxSplits` in one last part.
    @Test func theSplitBoundsItsParts() {
        #expect(CacheControl.split("a,,b, ,c", maxSplits: 64) == ["a", "b", "c"])
        #expect(CacheControl.split("a,b,c,d", maxSplits: 2) == ["a", "b", "c,d"])
        #expect(CacheControl.split("", maxSplits: 2).isEmpty)
        // Read byte by byte (issue 29): text of several bytes a character around the delimiters.
        #expect(CacheControl.split(#"é="ü, ñ",😀, max-age=9"#, maxSplits: 64) == [#"é="ü, ñ""#, "😀", " max-age=9"])
        #expect(CacheControl(" \t max-age=7 ,\tprivate ").maxAge == 7)
        #expect(CacheControl(" \t max-age=7 ,\tprivate ").isPrivate)
        #expect(CacheControl("max-age=\u{00A0}12\u{00A0}").maxAge == 12)
    }

    /// Directive names are matched as bytes, without regard to ASCII case, and split from their
    /// argument at the first `=` byte (issue 29), as a server reads them.
    @Test func directivesAreReadAsBytes() {
        let shouted = CacheControl("NO-STORE, No-Cache, MUST-REVALIDATE, Private, PUBLIC, Max-Age=5, S-MAXAGE=6")
        #expect(shouted.noStore && shouted.noCache && shouted.mustRevalidate && shouted.isPrivate && shouted.isPublic)
        #expect(shouted.maxAge == 5 && shouted.sharedMaxAge == 6)
        #expect(CacheControl("proxy-revalidate").mustRevalidate)
        #expect(CacheControl("Only-If-Cached").onlyIfCached)
        #expect(CacheControl("stale-if-error=30").staleIfError == 30)
        // Spaces around the name, the `=` and the value; a quoted value; Unicode spaces at the ends.
        #expect(CacheControl(" max-age = 7 ").maxAge == 7)
        #expect(CacheControl(#"max-age="8""#).maxAge == 8)
        #expect(CacheControl(#"max-age=" 9 ""#).maxAge == 9)
        #expect(CacheControl("\u{00A0}max-age\u{2003}=10").maxAge == 10)
        #expect(CacheControl("\u{200B}no-store").noStore)
        // A name that is only like one: not the directive.
        #expect(!CacheControl("no-storex, xno-store, no-stor, no-store\u{301}").noStore)
        #expect(CacheControl("max-agé=60").maxAge == nil)
        // The first `=` byte splits, even with a combining mark after it: a malformed `max-age`,
        // stale at once, never an unknown name (which would leave the rest to decide freshness).
        #expect(CacheControl("max-age=\u{301}60, max-age=60").maxAge == 0)
        #expect(CacheControl(#"max-age=""#).maxAge == 0)
        #expect(CacheControl("max-age=, public").maxAge == 0)
        #expect(CacheControl("max-age").maxAge == 0)
        #expect(CacheControl(#"max-age="60"\#u{301}"#).maxAge == 0)
        // No name but an argument: read as `no-store` and `no-cache`, never skipped (found by
        // review: `=no-store, max-age=86400` was fresh for a day); a lone `=` is an empty member.
        for header in ["=no-store, max-age=86400", "max-age=86400,=no-cache", " = x ", #"=" ""#] {
            #expect(CacheControl(header).noStore && CacheControl(header).noCache, "\(header)")
        }
        #expect(!CacheControl("max-age=60, =, = ").noStore)
        #expect(CacheControl("max-age=60, =, = ").maxAge == 60)
        // A number too large is capped; one with anything but digits after the cap is no number.
        #expect(CacheControl("max-age=0000000000000000000000000000042").maxAge == 42)
        #expect(CacheControl("max-age=99999999999999999999999999").maxAge == CacheControl.maxDeltaSeconds)
        #expect(CacheControl("max-age=99999999999999999999999999x").maxAge == 0)
        #expect(CacheControl("max-age=-5").maxAge == 0)
        // Read through Foundation's bridged strings too: on Apple platforms an `NSString` with a
        // non-ASCII character has no contiguous UTF-8, so the copying paths are taken there.
        let bridged = String(NSString(string: "Max-Age=11, NO-STORE, x=é"))
        #expect(CacheControl(bridged).maxAge == 11 && CacheControl(bridged).noStore)
        let bridgedName = String(NSString(string: "é=1, Max-Age=12"))
        #expect(CacheControl(bridgedName).maxAge == 12 && !CacheControl(bridgedName).noStore)
    }

    /// Whitespace dropped as bytes where it can be, and as ``trimmingWhitespace()`` drops it where a
    /// non-ASCII scalar begins or ends the text.
    @Test func whitespaceDroppedWithoutAStringIsTrimmedTheSameWay() {
        for text in [
            "", " ", " \t ", "a", " a ", "\ta b\t", "\u{00A0}x\u{2003}", " \u{00A0} x \u{3000} ", "é", " é ",
            " \u{301}b ", "\u{200B}max-age=60\u{200B}", "\u{0B}x\u{0C}", "x\u{2028}", "😀 ", " \u{FEFF}y",
        ] {
            #expect(
                String(text[...].droppingWhitespace()) == text.trimmingWhitespace(), "\(Array(text.unicodeScalars))")
            // A slice out of a longer text, as the directives are.
            let longer = "a," + text + ",b"
            let start = longer.utf8.index(longer.startIndex, offsetBy: 2)
            let end = longer.utf8.index(longer.endIndex, offsetBy: -2)
            #expect(
                String(longer[start..<end].droppingWhitespace()) == text.trimmingWhitespace(),
                "\(Array(text.unicodeScalars))")
        }
    }

    /// Header text trimmed as Foundation's `trimmingCharacters(in: .whitespaces)` did, without it.
    @Test func whitespaceIsTrimmedAtBothEndsOnly() {
        #expect(" \t a b \t ".trimmingWhitespace() == "a b")
        #expect("\u{00A0}x\u{2003}".trimmingWhitespace() == "x")
        #expect("   ".trimmingWhitespace().isEmpty)
        #expect("".trimmingWhitespace().isEmpty)
        #expect("é".trimmingWhitespace() == "é")
        #expect(" \"etag\" "[...].trimmingWhitespace() == "\"etag\"")
        // Scalar by scalar, as Foundation's `.whitespaces` (found by review): not line breaks, and
        // a space with a combining mark after it loses only the space.
        #expect("\u{0B}x\u{0C}".trimmingWhitespace() == "\u{0B}x\u{0C}")
        #expect("\u{2028}x\u{85}\u{2029}".trimmingWhitespace() == "\u{2028}x\u{85}\u{2029}")
        #expect(" \u{301}b ".trimmingWhitespace() == "\u{301}b")
        for text in [
            " \u{0B}a\t", "\u{3000}\u{301}\u{2028} ", " \u{00A0}\u{1680}\u{202F}", "\r\n x \n",
            "\u{200B}max-age=60\u{200B}",
            "\u{180E}x\u{205F}", "\u{2000}\u{200A}y\u{FEFF}",
        ] {
            #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespaces))
        }
    }

    /// A list member's combining mark is part of its value: `"a, \u{301}b"` and `"a,b"` are told
    /// apart by `Vary` (found by review: one digest for both).
    @Test func aCombiningMarkIsPartOfAVaryValue() {
        let digests = ["a, \u{301}b", "a,b"].map { value in
            var request = URLRequest(url: URL(string: "https://x.example/")!)
            request.setValue(value, forHTTPHeaderField: "Accept-Language")
            return CacheRules.varyDigests(names: ["accept-language"], request: request)
        }
        #expect(digests[0] != digests[1])
    }

    /// A quoted string left open hides what follows its quote, so the header is read as
    /// `no-store` and `no-cache` (found by review: `no-store` was missed after `x="\u{301}`).
    @Test(arguments: [#"max-age=86400, x="\#u{301}, no-store"#, #"max-age=86400, private="a, no-store"#])
    func aQuoteLeftOpenIsReadAsNoStore(header: String) {
        let directives = CacheControl(header)
        #expect(directives.noStore)
        #expect(directives.noCache)
        #expect(
            !CacheRules.isStorable(
                request: Self.request(), statusCode: 200, headers: ["Cache-Control": header], policy: .protocolRules))
        let closed = CacheControl(#"max-age=86400, private="a, b", public"#)
        #expect(!closed.noStore && closed.isPublic && closed.maxAge == 86400)
    }

    /// A directive past the bound is not missed: the header counts as `no-store` (failed before: the
    /// `no-store` after 64 other directives was ignored and the response stored for ten minutes).
    @Test func aNoStorePastTheDirectivesReadIsNotMissed() {
        let late = (["max-age=600"] + Array(repeating: "x", count: 64) + ["no-store"]).joined(separator: ",")
        let directives = CacheControl(late)
        #expect(directives.noStore)
        #expect(directives.noCache)
        #expect(
            !CacheRules.isStorable(
                request: Self.request(), statusCode: 200, headers: ["Cache-Control": late],
                policy: .protocolRules))
        let within = (["max-age=600"] + Array(repeating: "x", count: 63)).joined(separator: ",")
        #expect(!CacheControl(within).noStore)
        #expect(CacheControl(within).maxAge == 600)
    }

    /// A `Vary` naming more fields than are read (or a `*` past the bound) is never stored (failed
    /// before: the first 64 names were kept and a request differing in the 65th matched).
    @Test func aVaryPastTheNamesReadIsNotStored() {
        let names = (0..<100).map { "X-V\($0)" }
        #expect(CacheRules.varyNames((names + ["*"]).joined(separator: ", ")) == nil)
        #expect(CacheRules.varyNames(names.joined(separator: ", ")) == nil)
        #expect(CacheRules.varyNames(names.prefix(64).joined(separator: ", "))?.count == 64)
        #expect(
            !CacheRules.isStorable(
                request: Self.request(), statusCode: 200,
                headers: ["Cache-Control": "max-age=600", "Vary": names.joined(separator: ",")], policy: .protocolRules)
        )
    }

    /// Found by review: a `304` without `Date` or `Age` kept the first answer's, so the entry it
    /// freshened was as old as the first answer (stale at once).
    @Test func a304WithoutDateOrAgeMakesTheEntryNew() throws {
        let old = Date(timeIntervalSince1970: 1_000_000_000)
        let entry = CachedResponse(
            url: URL(string: "https://api.example.com/a")!, statusCode: 200,
            headers: ["Date": HTTPDate.format(old), "age": "30", "Cache-Control": "max-age=60"], body: Data(),
            requestTime: old, responseTime: old, varyDigests: [:])
        let later = old.addingTimeInterval(3_600)
        let merged = CacheRules.merging(entry, notModified: [:], requestTime: later, responseTime: later)
        #expect(merged.header("Date") == HTTPDate.format(later))
        #expect(merged.header("Age") == nil)
        #expect(CacheRules.currentAge(merged, now: later) == 0)
        // A 304 that sends them is taken at its word.
        let told = CacheRules.merging(
            entry, notModified: ["Date": HTTPDate.format(later), "Age": "5"], requestTime: later, responseTime: later)
        #expect(CacheRules.currentAge(told, now: later) == 5)
    }

    @Test(arguments: [0.0, 784_111_777, 1_000_000_000.9, 951_782_400, 4_102_444_800, -86_401])
    func httpDatesRoundTrip(seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        let text = HTTPDate.format(date)
        #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: seconds.rounded(.down)), "\(text)")
        if seconds == 784_111_777 { #expect(text == "Sun, 06 Nov 1994 08:49:37 GMT") }
    }
}
