import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// RedactionPolicy: one policy for the logger and the replay fixtures, tested against real-world
/// secret shapes, and changing nothing but the secret values.
@Suite(.timeLimit(.minutes(2))) struct RedactionPolicyTests {
    // MARK: Names

    @Test(arguments: [
        "Authorization", "proxy-authorization", "COOKIE", "set_cookie", "X-API-Key", "x_api_key", "xApiKey", "Api-Key",
        "X-Auth-Token", "X-Amz-Security-Token", "X-Goog-Api-Key", "Private-Token", "X-Vault-Token",
        "Ocp-Apim-Subscription-Key", "x-auth-key", "X-Api-Token", "dd-api-key", "DD-APPLICATION-KEY",
        "X-Algolia-API-Key",
    ])
    func credentialHeadersAreSecretInAnyCaseStyle(name: String) {
        #expect(RedactionPolicy.default.isSecretHeader(name))
        #expect(RedactionPolicy.default.headerValue("v4lue", forHeader: name) == "<redacted>")
    }

    @Test(arguments: [
        "X-Amz-Signature", "x-amz-credential", "X-Amz-Security-Token", "auth_token", "private_token", "jwt", "token",
        "access_token", "accessToken", "api_key", "API-KEY", "signature", "sig", "client_secret", "password",
        "user[password]", "user%5Bpassword%5D", "a[b][token]",
        // One escape that is not UTF-8, or a lone `%`, leaves the other escapes decodable (found by review).
        "user%5B%FF%5D%5Bpassword%5D", "a%5B100%%5D%5Btoken%5D",
    ])
    func secretQueryItemsInAnyCaseStyleAndBrackets(name: String) {
        let url = RedactionPolicy.default.url("https://api.example.com/x?view=full&\(name)=s3cr3t&page=2")
        #expect(url == "https://api.example.com/x?view=full&\(name)=<redacted>&page=2")
    }

    @Test func usersAddAndRemoveNames() {
        var policy = RedactionPolicy.default
        policy.headers.insert("X-Tenant")
        policy.bodyFields.insert("ssn")
        policy.queryItems.remove("code")
        #expect(policy.isSecretHeader("x_tenant"))
        #expect(policy.body(Data(#"{"SSN":"123"}"#.utf8), contentType: nil) == Data(#"{"SSN":"<redacted>"}"#.utf8))
        #expect(policy.url("https://x.example/cb?code=42") == "https://x.example/cb?code=42")
        #expect(!RedactionPolicy.default.isSecretHeader("x-tenant"))
        // A placeholder with a quote still leaves JSON.
        let quoted = RedactionPolicy(placeholder: #"<"x">"#).body(Data(#"{"token":1}"#.utf8), contentType: nil)
        #expect(String(decoding: quoted, as: UTF8.self) == #"{"token":"<\"x\">"}"#)
    }

    /// URLs read as UTF-8 (issue 29): each delimiter found by its byte, with text of several bytes
    /// per character around it, and a URL with nothing secret returned as it is.
    @Test(arguments: [
        ("https://api.example.com/v1/items/1", "https://api.example.com/v1/items/1"),
        ("https://ada:pa55@example.com/x?page=2", "https://<redacted>@example.com/x?page=2"),
        ("https://example.com/a@b", "https://example.com/a@b"),
        ("ftp:x://u:p@h/", "ftp:x://<redacted>@h/"),
        ("mailto:ada@example.com", "mailto:ada@example.com"),
        ("https://é.example/ü?token=ñ&ä=1", "https://é.example/ü?token=<redacted>&ä=1"),
        ("https://x.example/😀?x=&token=1&", "https://x.example/😀?x=&token=<redacted>&"),
        ("https://x.example/?", "https://x.example/?"),
        ("https://x.example/p?&&token", "https://x.example/p?&&token"),
        ("https://x.example/#section-2", "https://x.example/#section-2"),
        ("https://x.example/#/cb?access_token=A&s=1", "https://x.example/#/cb?access_token=<redacted>&s=1"),
        ("https://x.example/#jwt=J", "https://x.example/#jwt=<redacted>"),
        ("https://u:p@x.example/?a=1#token=T", "https://<redacted>@x.example/?a=1#token=<redacted>"),
        ("/relative?sig=S", "/relative?sig=<redacted>"),
    ])
    func urlsAreRedactedByteByByte(text: String, expected: String) {
        #expect(RedactionPolicy.default.url(text) == expected)
    }

    /// Found by review: a combining mark after a delimiter, a `?` in a password, a `?` in a
    /// fragment value, a URL in a query. Each pair is text and what may be written of it.
    @Test(arguments: [
        // The `@` hidden behind a `?` (with or without a combining mark after it).
        ("https://user:p?\u{301}w@host/x", "https://<redacted>@host/x"),
        ("https://user:p?w@host/x?token=T", "https://<redacted>@host/x?token=<redacted>"),
        ("https://user:p#w@host/", "https://<redacted>@host/"),
        // Ambiguous: an `@` in a query right after the host is hidden with what precedes it.
        ("https://host?email=a@b.example", "https://<redacted>@b.example"),
        ("https://host/?email=a@b.example", "https://host/?email=a@b.example"),
        // A URL in a query is not this URL's user info; the query is still read.
        ("/p?access_token=T&next=https://a@b/", "/p?access_token=<redacted>&next=https://a@b/"),
        // A `?` in a fragment value is not a hash router's query.
        ("https://x/#access_token=T&state=/home?tab=1", "https://x/#access_token=<redacted>&state=/home?tab=1"),
        ("https://x/#/cb?access_token=T", "https://x/#/cb?access_token=<redacted>"),
        // A combining mark after the router's `?` is written once.
        ("https://x/#/cb?\u{301}a=1&token=T", "https://x/#/cb?\u{301}a=1&token=<redacted>"),
        ("https://x/#access_token=T&s=?\u{301}", "https://x/#access_token=<redacted>&s=?\u{301}"),
        // Second review: what follows an `@` in a query or fragment right after the host is still
        // read as that query or fragment.
        ("https://host?email=a@b.example&token=T", "https://<redacted>@b.example&token=<redacted>"),
        ("https://app.example#state=a@b&access_token=T", "https://<redacted>@b&access_token=<redacted>"),
        ("https://host?hint=me@x.com/&code=T#k", "https://<redacted>@x.com/&code=<redacted>#k"),
        // User info without a literal `://`, read as browsers read it.
        ("//user:pw@host/p", "//<redacted>@host/p"),
        ("https:/user:pw@host/", "https:/<redacted>@host/"),
        ("https:\\user:pw@host/", "https:\\<redacted>@host/"),
        ("HTTPS:\t//user:pw@host/", "HTTPS:\t//<redacted>@host/"),
        ("https:user:pw@host/", "https:<redacted>@host/"),
        // Routes with parameters, or a second `#`.
        ("https://app/#/callback#access_token=T", "https://app/#/callback#access_token=<redacted>"),
        ("https://app/#/cb;x=1?access_token=T", "https://app/#/cb;x=1?access_token=<redacted>"),
        // An index is not the key: `token[0]` is `token`.
        ("https://x/?token[0]=T&a[1][2]=3", "https://x/?token[0]=<redacted>&a[1][2]=3"),
    ])
    func reviewedURLsGiveNothingAway(text: String, expected: String) {
        #expect(!text.contains("<redacted>"))
        let written = RedactionPolicy.default.url(text)
        #expect(written == expected)
        #expect(!written.contains("T&") && !written.hasSuffix("=T") && !written.contains(":p"))
    }

    /// Nothing secret, nothing added: an empty user info, a path with an `@`, a non-special
    /// scheme without `//`.
    @Test(arguments: [
        "https://@host/", "https://example.com/@ada", "mailto:ada@example.com", "urn:x:a@b", "//host/a@b",
        "https://host/#a=1;b=2?c=3#d", "x@y", "",
    ])
    func urlsWithNothingSecretAreReturnedAsTheyAre(text: String) {
        #expect(RedactionPolicy.default.url(text) == text)
    }

    /// The quick check in front of the full reading: only a text with an `@`, `?` or `#` is read,
    /// and any one of the three is enough to be read (as text and as a `URL`).
    @Test func onlyATextWithAnAtAQueryOrAFragmentIsRead() throws {
        #expect(!RedactionPolicy.mayHoldSecrets("https://api.example.com/v1/items/1"))
        #expect(!RedactionPolicy.mayHoldSecrets("https://example.com/caf\u{E9}/\u{1F600}"))
        #expect(!RedactionPolicy.mayHoldSecrets(""))
        for text in ["https://u:p@h/", "https://h/?token=T", "https://h/#access_token=T", "caf\u{E9}@"] {
            #expect(RedactionPolicy.mayHoldSecrets(text))
        }
        let plain = try #require(URL(string: "https://api.example.com/v1/items/1"))
        #expect(RedactionPolicy.default.url(plain) == plain)
        // Relative to a base with a secret in its query: returned absolute, without the base.
        let base = try #require(URL(string: "https://h/v1/?token=T"))
        let relative = try #require(URL(string: "items/1", relativeTo: base))
        let written = RedactionPolicy.default.url(relative)
        #expect(written.baseURL == nil)
        #expect(written.absoluteString == "https://h/v1/items/1")
        #expect(!"\(written)".contains("token"))
        let secret = try #require(URL(string: "https://h/x?token=T#access_token=F"))
        #expect(
            RedactionPolicy.default.url(secret).absoluteString
                == "https://h/x?token=%3Credacted%3E#access_token=%3Credacted%3E")
    }

    /// A name is read up to its first `=` byte, as a server splits it: in `x=\u{301}[token]=S` the
    /// name is `x` (the value of `x` is not secret), where reading `Character`s saw `x=\u{301}[token]`.
    @Test func aQueryNameEndsAtItsFirstEqualsByte() {
        let text = "https://x/?x=\u{301}[token]=S&token=T"
        #expect(RedactionPolicy.default.url(text) == "https://x/?x=\u{301}[token]=S&token=<redacted>")
        #expect(
            URLComponents(string: "https://x/?x=%CC%81%5Btoken%5D=S")?.queryItems?.first?.name == "x")
    }

    @Test func urlValuedHeadersAreRedactedAsURLs() {
        let policy = RedactionPolicy.default
        #expect(
            policy.headerValue(
                "https://app.example.com/cb?code=C0DE&state=s#access_token=FR4G&token_type=bearer",
                forHeader: "Location")
                == "https://app.example.com/cb?code=<redacted>&state=s#access_token=<redacted>&token_type=bearer")
        #expect(
            policy.headerValue("https://ada:pa55@example.com/x", forHeader: "content-location")
                == "https://<redacted>@example.com/x")
        #expect(policy.headerValue("/docs#section-2", forHeader: "Location") == "/docs#section-2")
        // A hash router's own query (found by review).
        #expect(
            policy.headerValue("https://app.example.com/#/cb?access_token=T0K&state=s", forHeader: "Location")
                == "https://app.example.com/#/cb?access_token=<redacted>&state=s")
        #expect(
            policy.url(URL(string: "https://x.example/a?sig=abc")!).absoluteString
                == "https://x.example/a?sig=%3Credacted%3E")
    }

    // MARK: Bodies, byte for byte

    @Test func onlyTheSecretValuesChangeInAJSONBody() {
        let body = #"""
            { "id" : 12345678901234567890,"amount":1.000000000000000000001 ,
              "name":"\u00e9l\u00e8ve \"quoted\"", "password" : "pw-1", "nested": {"zeta":1,"alpha":[1,2,{"refreshToken":"rt-2"}]},
              "accessToken":{"raw":"obj", "deep": [1, {"x": "}"}]},	"pass\u0077ord": 42, "count":  -0.0e+10, "apiKey":null }
            """#
        let expected = #"""
            { "id" : 12345678901234567890,"amount":1.000000000000000000001 ,
              "name":"\u00e9l\u00e8ve \"quoted\"", "password" : "REDACTED", "nested": {"zeta":1,"alpha":[1,2,{"refreshToken":"REDACTED"}]},
              "accessToken":"REDACTED",	"pass\u0077ord": "REDACTED", "count":  -0.0e+10, "apiKey":"REDACTED" }
            """#
        let policy = RedactionPolicy(placeholder: "REDACTED")
        #expect(
            String(decoding: policy.body(Data(body.utf8), contentType: "application/json"), as: UTF8.self) == expected)
        // Nothing secret: the very same bytes.
        let plain = Data(#"{"id": 12345678901234567890, "b" :[ 1.50 ]}"#.utf8)
        #expect(policy.body(plain, contentType: "application/json") == plain)
    }

    @Test func jsonHeldAsTextInAStringIsRedactedToo() throws {
        let body =
            #"{"payload":"{\"user\":\"ada\",\"token\":\"in-1\",\"deeper\":\"{\\\"secret\\\":\\\"in-2\\\"}\"}","n":1}"#
        let redacted = String(
            decoding: RedactionPolicy.default.body(Data(body.utf8), contentType: "application/json"), as: UTF8.self)
        #expect(!redacted.contains("in-1") && !redacted.contains("in-2"))
        // Still JSON, whose payload is still JSON with the same members.
        let outer = try #require(try JSONSerialization.jsonObject(with: Data(redacted.utf8)) as? [String: Any])
        let payload = try #require(outer["payload"] as? String)
        let inner = try #require(try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any])
        #expect(inner["user"] as? String == "ada")
        #expect(inner["token"] as? String == "<redacted>")
        let deeper = try #require(inner["deeper"] as? String)
        #expect(deeper == #"{"secret":"<redacted>"}"#)
    }

    @Test func aRecordedJSONBodyReplaysByteForByteButItsSecrets() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("bytes.har")
        let body = #"{"zeta": 12345678901234567890, "password":"pa55",  "alpha":"\u00e9" , "n":1.10, "token":"t0k3n"}"#
        let network = StubTransport(unmatched: .throwError)
            .on(.get, "v1/me", .data(Data(body.utf8), headers: ["Content-Type": "application/json"]))
        let request = URLRequest(url: URL(string: "https://api.example.com/v1/me")!)
        _ = try await ReplayTransport(fixture: fixture, mode: .record, upstream: network).send(request)
        let replayed = try await ReplayTransport(fixture: fixture, mode: .replay, upstream: StubTransport())
            .send(request)
        #expect(
            String(decoding: replayed.data, as: UTF8.self)
                == #"{"zeta": 12345678901234567890, "password":"REDACTED",  "alpha":"\u00e9" , "n":1.10, "token":"REDACTED"}"#
        )
    }

    @Test func formMultipartAndStreamedBodies() throws {
        let policy = RedactionPolicy.default
        let form =
            "grant_type=password&username=ada&password=hunter2&client_id=app&client_secret=cs1&user%5Bpassword%5D=x"
            + "&u%5B%FF%5D%5Btoken%5D=y"
        #expect(
            String(
                decoding: policy.body(Data(form.utf8), contentType: "application/x-www-form-urlencoded"), as: UTF8.self)
                == "grant_type=password&username=ada&password=<redacted>&client_id=app&client_secret=<redacted>"
                + "&user%5Bpassword%5D=<redacted>&u%5B%FF%5D%5Btoken%5D=<redacted>")
        let multipart =
            "--XyZ\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nada\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"user[password]\"\r\n\r\nmp-secret\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"meta\"\r\nContent-Type: application/json\r\n\r\n"
            + "{\"apiKey\": \"k-1\"}\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n\"token\":1\r\n--XyZ--\r\n"
        let redacted = String(
            decoding: policy.body(Data(multipart.utf8), contentType: "multipart/form-data; boundary=XyZ"), as: UTF8.self
        )
        #expect(
            redacted
                == multipart.replacingOccurrences(of: "mp-secret", with: "<redacted>")
                .replacingOccurrences(of: "\"k-1\"", with: "\"<redacted>\""))
        // Cut short inside the secret part, as a log's excerpt is.
        let cutAt = try #require(multipart.range(of: "mp-secret")).lowerBound
        let cut = Data(multipart[..<cutAt].utf8) + Data("mp-sec".utf8)
        let redactedCut = String(
            decoding: policy.body(cut, contentType: "multipart/form-data; boundary=XyZ"), as: UTF8.self)
        #expect(redactedCut == multipart[..<cutAt] + "<redacted>")
        // Sniffed without a content type, too.
        #expect(
            !String(decoding: policy.body(Data(multipart.utf8), contentType: nil), as: UTF8.self).contains("mp-secret"))

        let sse =
            "event: login\ndata: {\"token\":\"sse-1\"}\n\ndata: {\"user\":{\"refresh_token\":\"sse-2\"}}\nid: 3\n\n"
        #expect(
            String(decoding: policy.body(Data(sse.utf8), contentType: "text/event-stream"), as: UTF8.self)
                == sse.replacingOccurrences(of: "\"sse-1\"", with: "\"<redacted>\"")
                .replacingOccurrences(of: "\"sse-2\"", with: "\"<redacted>\""))
        let ndjson = "{\"id\":1,\"secret\":\"nd-1\"}\n{\"id\":2,\"secret\":\"nd-2\"\n{\"id\":3,\"jwt\":\"nd-3\"}\n"
        let redactedLines = String(
            decoding: policy.body(Data(ndjson.utf8), contentType: "application/x-ndjson"), as: UTF8.self)
        for secret in ["nd-1", "nd-2", "nd-3"] { #expect(!redactedLines.contains(secret)) }
    }

    @Test func arbitraryBytesNeverTrapAndEditsStayInOrder() async {
        // Bytes drawn from JSON, form and multipart punctuation and secret names, in any order.
        let alphabet = Array(#"{}[]":,=&\ "u0041--b\r\n token password a[b] Content-Disposition: name="x"; 1"#.utf8)
        var random = SeededRandom.forTest("redaction").withLock { $0 }
        let types: [String?] = [
            nil, "application/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=b",
            "text/event-stream", "multipart/form-data",
        ]
        var misplaced = 0
        for round in 0..<3_000 {
            // A long synchronous loop on one of the few cooperative threads holds up every other
            // test under the sanitizers: let them run now and then.
            if round.isMultiple(of: 100) { await Task.yield() }
            let count = Int.random(in: 0...96, using: &random)
            let body = Data((0..<count).map { _ in alphabet.randomElement(using: &random) ?? 0 })
            let type = types[round % types.count]
            let edits = RedactionPolicy.default.bodyEdits(body, contentType: type)
            // In order, not overlapping, inside the body.
            var end = 0
            for edit in edits {
                if !(edit.range.lowerBound >= end && edit.range.upperBound <= body.count) { misplaced += 1 }
                end = edit.range.upperBound
            }
            _ = RedactionPolicy.default.body(body, contentType: type)
            _ = RedactionPolicy.sizes([count / 2, count - count / 2], after: edits)
        }
        #expect(misplaced == 0, "\(misplaced) edits out of order or outside their body")
    }

    @Test func chunkBoundariesMoveWithTheBytes() {
        let body = Data(#"{"token":"abcdef","x":1}"#.utf8)
        let edits = RedactionPolicy(placeholder: "R").bodyEdits(body, contentType: nil)
        // Pieces: `{"token":"ab` | `cdef","x` | `":1}`; the value `"abcdef"` becomes `"R"`, and the
        // boundary inside it moves to its end: `{"token":"R"` | `,"x` | `":1}`.
        #expect(RedactionPolicy.sizes([12, 8, 4], after: edits) == [12, 3, 4])
        #expect(RedactionPolicy.applying(edits, to: body) == Data(#"{"token":"R","x":1}"#.utf8))
    }

    // MARK: A corpus of real-world secret shapes

    /// A request and its answer, with the secrets they carry.
    struct Shape: TargetType, CustomTestStringConvertible {
        var name: String
        var method: HTTPMethod = .get
        var path = "v1/call"
        var query: Parameters = [:]
        var headers: [String: String] = [:]
        var body: Data?
        var status = 200
        var responseHeaders: [String: String] = ["Content-Type": "application/json"]
        var responseBody = Data("{}".utf8)
        var secrets: [String]

        var baseURL: URL { URL(string: "https://api.example.com")! }
        var task: HTTPTask {
            if let body { return .compositeData(body, urlParameters: query) }
            return .parameters(query, encoding: .queryString)
        }
        var testDescription: String { name }
    }

    // Computed, not a `static let`: LeakSanitizer reports the `Data` a lazily initialized global
    // holds at exit as leaked.
    static var corpus: [Shape] {
        [
            Shape(
                name: "OAuth password grant", method: .post, path: "oauth/token",
                headers: [
                    "Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic Y2xpZW50OnNlY3JldA==",
                ],
                body: Data(
                    "grant_type=password&username=ada&password=Hunter2-PW&client_id=app&client_secret=CS-7d1f9".utf8),
                responseBody: Data(
                    #"{"access_token":"AT-2YotnFZFEjr1zCsicMWpAA","token_type":"Bearer","expires_in":3600,"refresh_token":"RT-tGzv3JOkF0XG5Qx2TlKWIA","id_token":"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"}"#
                        .utf8),
                secrets: [
                    "Y2xpZW50OnNlY3JldA", "Hunter2-PW", "CS-7d1f9", "AT-2YotnFZFEjr1zCsicMWpAA",
                    "RT-tGzv3JOkF0XG5Qx2TlKWIA",
                    "eyJhbGciOiJSUzI1NiJ9",
                ]),
            Shape(
                name: "AWS presigned URL", path: "bucket/report.pdf",
                query: [
                    "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
                    "X-Amz-Credential": "AKIAIOSFODNN7EXAMPLE/20261125/us-east-1/s3",
                    "X-Amz-Date": "20261125T000000Z", "X-Amz-Expires": "900", "X-Amz-SignedHeaders": "host",
                    "X-Amz-Security-Token": "FQoGZXIvYXdzEXAMPLEtoken",
                    "X-Amz-Signature": "aeeed9bbccd4d02ee5c0109b86d86835",
                ],
                headers: ["X-Amz-Security-Token": "FQoGZXIvYXdzEXAMPLEtoken"],
                secrets: ["AKIAIOSFODNN7EXAMPLE", "FQoGZXIvYXdzEXAMPLEtoken", "aeeed9bbccd4d02ee5c0109b86d86835"]),
            Shape(
                name: "GitHub and GitLab tokens", path: "projects",
                query: ["private_token": "glpat-QUERYxxxxxxxxxxxxxx", "auth_token": "AUTHTOKEN-q1"],
                headers: [
                    "Authorization": "token ghp_16C7e42F292c6912E7710c838347Ae178B4a",
                    "Private-Token": "glpat-HEADERxxxxxxxxxxxxx",
                    "X-Gitlab-Token": "GLHOOK-1",
                ],
                secrets: [
                    "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "glpat-HEADERxxxxxxxxxxxxx",
                    "glpat-QUERYxxxxxxxxxxxxxx",
                    "AUTHTOKEN-q1", "GLHOOK-1",
                ]),
            Shape(
                name: "JWT and camelCase JSON", method: .post, path: "session", query: ["jwt": "eyJQUERY.eyJx.sig1"],
                headers: ["Content-Type": "application/json", "X-API-Key": "XAPIKEY-1", "X-Auth-Token": "XAUTH-1"],
                body: Data(
                    #"{"user":{"login":"ada","password":"PW-json-1"},"apiKey":"APIKEY-json","clientSecret":"CS-json","secret":"SECRET-json"}"#
                        .utf8),
                responseBody: Data(
                    #"{"session":{"accessToken":"AT-camel","refreshToken":"RT-camel","idToken":"IDT-camel","token":"TOK-plain"}}"#
                        .utf8),
                secrets: [
                    "eyJQUERY", "XAPIKEY-1", "XAUTH-1", "PW-json-1", "APIKEY-json", "CS-json", "SECRET-json",
                    "AT-camel",
                    "RT-camel", "IDT-camel", "TOK-plain",
                ]),
            Shape(
                name: "API-key headers",
                headers: [
                    "Api-Key": "APIKEY-h1", "X-Goog-Api-Key": "GOOG-h1", "X-Vault-Token": "hvs.VAULT-h1",
                    "Ocp-Apim-Subscription-Key": "OCP-h1", "Cookie": "sid=COOKIE-h1",
                ],
                responseHeaders: ["Content-Type": "application/json", "Set-Cookie": "sid=SETCOOKIE-h1; HttpOnly"],
                secrets: ["APIKEY-h1", "GOOG-h1", "VAULT-h1", "OCP-h1", "COOKIE-h1", "SETCOOKIE-h1"]),
            Shape(
                name: "bracketed form parameters", path: "users",
                query: ["user": ["name": "ada", "password": "BRACKET-pw"]],
                secrets: ["BRACKET-pw"]),
            Shape(
                name: "SSE feed with tokens", path: "events",
                responseHeaders: ["Content-Type": "text/event-stream"],
                responseBody: Data(
                    "event: session\ndata: {\"token\":\"SSE-tok-1\"}\n\nid: 2\ndata: {\"user\":{\"accessToken\":\"SSE-tok-2\"}}\n\n"
                        .utf8),
                secrets: ["SSE-tok-1", "SSE-tok-2"]),
            Shape(
                name: "multipart with a password field", method: .post, path: "signup",
                headers: ["Content-Type": "multipart/form-data; boundary=b0und"],
                body: Data(
                    ("--b0und\r\nContent-Disposition: form-data; name=\"login\"\r\n\r\nada\r\n"
                        + "--b0und\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nMULTI-pw\r\n--b0und--\r\n")
                        .utf8),
                secrets: ["MULTI-pw"]),
            Shape(
                name: "URL-valued response headers", path: "authorize", status: 200,
                responseHeaders: [
                    "Location":
                        "https://app.example.com/cb?code=LOC-code&state=s1#access_token=FRAG-tok&token_type=bearer",
                    "Content-Location": "https://ada:USERINFO-pw@files.example.com/x?sig=SIG-loc",
                ],
                secrets: ["LOC-code", "FRAG-tok", "USERINFO-pw", "SIG-loc"]),
        ]
    }

    @Test(arguments: corpus)
    func secretsNeverReachTheLogOrTheFixture(shape: Shape) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let fixture = folder.url.appendingPathComponent("corpus.har")
        let network = StubTransport(unmatched: .throwError)
            .on({ _ in true }, .data(shape.responseBody, status: shape.status, headers: shape.responseHeaders))
        let log = EventLog()
        let everything = NetworkLoggerPlugin.Options.verbose.union(.cURL)
        let provider = Provider<Shape>(
            transport: ReplayTransport(fixture: fixture, mode: .record, upstream: network),
            plugins: [
                .logger(everything, output: { log.append($0) }), .logger(.default, output: { log.append($0) }),
                .logger([.url, .responseStatus, .cURL], output: { log.append($0) }),
            ])
        _ = try await provider.request(shape)
        let streamed = try await provider.stream(shape)
        for try await _ in streamed.chunks {}

        let written = log.all.joined(separator: "\n")
        let recorded = try String(contentsOf: fixture, encoding: .utf8)
        #expect(written.contains("<redacted>"))
        #expect(recorded.contains("REDACTED"))
        for secret in shape.secrets {
            #expect(!written.contains(secret), "the log holds \(secret):\n\(written)")
            #expect(!recorded.contains(secret), "the fixture holds \(secret):\n\(recorded)")
        }
    }

    /// Found by review: parts that each name a new boundary (`multipart/json; boundary=…`) were
    /// read one inside the other without end (the stack overflowed). Past four levels a nested
    /// part is replaced whole; within them, secrets are found, in `multipart/mixed` parts too.
    @Test func deeplyNestedMultipartBodiesAreBounded() {
        // Boundaries that are prefixes of later ones (`b1`, `b10`) and ones that are not (`b1x`).
        for suffix in ["", "x"] {
            var body = ""
            for level in 0..<20_000 {
                body += "--b\(level)\(suffix)\r\nContent-Disposition: form-data; name=\"p\"\r\n"
                body += "Content-Type: multipart/json; boundary=b\(level + 1)\(suffix)\r\n\r\n"
            }
            body += "{\"token\":\"deep\"}"
            let redacted = RedactionPolicy.default.body(
                Data(body.utf8), contentType: "multipart/form-data; boundary=b0\(suffix)")
            let text = String(decoding: redacted, as: UTF8.self)
            #expect(!text.contains("deep"), "suffix '\(suffix)'")
            #expect(text.hasPrefix("--b0\(suffix)\r\n"))
        }
        let nested =
            "--outer\r\nContent-Disposition: form-data; name=\"inner\"\r\n"
            + "Content-Type: multipart/mixed; boundary=inner\r\n\r\n"
            + "--inner\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nhunter2\r\n"
            + "--inner\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nkept\r\n--inner--\r\n"
            + "--outer--\r\n"
        let kept = String(
            decoding: RedactionPolicy.default.body(
                Data(nested.utf8), contentType: "multipart/form-data; boundary=outer"),
            as: UTF8.self)
        #expect(!kept.contains("hunter2"))
        #expect(kept.contains("kept"))
    }
}
