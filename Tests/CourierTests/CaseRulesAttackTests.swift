import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The shared ASCII case rules (`Support/ASCII`) attacked where they are used: the base-URL check,
/// the final request's scheme check, traffic control's host key and response header lookup, each
/// held to Foundation's answer (or to HTTP's rules) on URLs and names written to confuse them.
@Suite struct CaseRulesAttackTests {
    /// Mixed-case schemes, schemes that merely start with `http`, user info with `@`, `@` in the
    /// path, query and fragment, and authorities that are nothing but user info.
    static let hostileURLs = [
        "HTTPS://Example.COM/", "hTtP://ExAmPlE.cOm:8080/x", "HtTpS://h", "HTTP://h:/", "hTtPs://h:0443/",
        "httpx://H/", "HTTPX://H:80/", "httpx:", "HTTPX:rest", "httpsx://h/", "HTTPSX://h/", "https+x://h/",
        "http+unix://%2Ftmp%2Fcourier.sock/x", "HTTP+UNIX://h/x", "http-x://h/", "http.x://h/", "https:",
        "HTTPS:", "hTTp:", "HTTP://@/", "HTTP://@h/", "https://u@h@/", "HTTPS://u:p@H.Test/p@th?q=@#@",
        "http://h/p@th@evil.test/", "http://h?x=@evil.test", "http://h#@evil.test", "http://u@h@evil.test/",
        "http://u:p@[::1]:8080/@x", "HTTP://[::1]/", "hTtP://[::1]:80@h/", "WSS://U@H", "wSs://h:443/", "WSX://h",
        "http://Ab@Cd@Ef/", "ftp://u@H/", "FTP://H/",
        // Empty hosts with a port, an empty IP literal, a zone, an empty port, ports past 65,535 or
        // zero-led past five digits, a trailing dot, percent-encoded hosts and user info.
        "http://:80/", "HTTP://u@:8080/x", "http://[]/", "http://[::1]:/", "http://[FE80::1%25eth0]:8080/",
        "http://[::FFFF:127.0.0.1]/", "HTTP://h:99999/", "http://h:000080/", "https://h:65536/", "http://h.:80/",
        "http://%68ost/", "http://h%2F@x/",
    ]

    @Test func theHostKeyAgreesWithFoundationOnHostileURLs() {
        for text in Self.hostileURLs {
            guard let url = URL(string: text) else { continue }
            #expect(
                TrafficController.hostKey(of: url) == TrafficController.foundationHostKey(of: url),
                "\(text): host \(url.host ?? "nil"), port \(url.port.map(String.init) ?? "nil")")
        }
    }

    /// `HTTPS://h` and `https://h` are one host for traffic control, whatever the case of either.
    @Test func mixedCaseSchemesAndHostsShareOneKey() {
        let keys = ["https://api.example.com/a", "HTTPS://API.EXAMPLE.COM/b", "hTtPs://Api.Example.Com:443/c"]
            .map { TrafficController.hostKey(of: URL(string: $0)) }
        #expect(Set(keys) == ["https://api.example.com:443"])
        #expect(
            TrafficController.hostKey(of: URL(string: "hTtP://API.example.com")) == "http://api.example.com:80")
    }

    @Test func theBaseURLCheckAgreesWithFoundationOnHostileURLs() {
        for text in Self.hostileURLs { BaseURLCheckTests.expectAgreementWithFoundation(text) }
    }

    @Test func theDestinationCheckAgreesWithFoundationOnHostileURLs() {
        let limits = Limits(allowedSchemes: ["http", "https", "httpx", "http+unix", "HTTPSX", "ftp", "wss"])
        for text in Self.hostileURLs {
            guard let url = URL(string: text) else { continue }
            BaseURLCheckTests.expectDestinationAgreement(url, text, limits: limits)
        }
    }

    /// Allowed sets of every size around the cut between comparing one by one (up to four) and
    /// looking up (five or more), empty included, set in mixed case: the same answer as the set's.
    @Test func theSchemeCheckAnswersAsTheSetAtEverySizeAroundItsCut() {
        let pool = ["HTTPS", "http", "Wss", "ftp", "httpx", "h"]
        let asked = ["https", "http", "wss", "ftp", "httpx", "h", "", "httpsx", "http+unix", "HTTPS", "ht"]
        for size in 0...pool.count {
            let limits = Limits(allowedSchemes: Set(pool.prefix(size)))
            for scheme in asked {
                #expect(
                    RequestValidation.isAllowed(scheme, in: limits.allowedSchemes)
                        == limits.allowedSchemes.contains(scheme), "\(scheme) in \(limits.allowedSchemes)")
            }
        }
    }

    /// A scheme that only starts with `http` is not `http`: with the default limits it is refused
    /// as a scheme, in any case, before anything is sent.
    @Test func schemesThatStartWithHTTPAreNotHTTP() throws {
        for text in ["httpx://h/", "HTTPX://h/", "http+unix://%2Ftmp%2Fs/x", "HTTPS+X://h/", "hTtPsX://h/"] {
            let url = try #require(URL(string: text))
            #expect {
                try RequestValidation.validateDestination(url, limits: Limits())
            } throws: { error in
                guard case CourierError.schemeNotAllowed(let refused) = error else { return false }
                return refused == url
            }
        }
        for text in ["HTTP://h/", "hTtPs://h/", "HTTPS://u@h/p@th"] {
            try RequestValidation.validateDestination(URL(string: text), limits: Limits())
        }
    }

    /// Allowed schemes set in any case, through the initializer or the property, allow the
    /// request's scheme in any case (a set `["HTTPS"]` refused every request).
    @Test func allowedSchemesSetInAnyCaseAllowTheScheme() throws {
        var limits = Limits.default
        limits.allowedSchemes = ["HTTPS", "Http+Unix"]
        #expect(limits.allowedSchemes == ["https", "http+unix"])
        limits.allowedSchemes.insert("WSS")
        #expect(limits.allowedSchemes == ["https", "http+unix", "wss"])
        for text in ["https://h/", "HTTPS://h/", "hTtP+uNiX://h/x", "wss://h/"] {
            let url = try #require(URL(string: text))
            try RequestValidation.validateDestination(url, limits: limits)
            #expect(limits.allows(url))
        }
        #expect(!limits.allows(URL(string: "http://h/")))
        #expect(
            Limits(allowedSchemes: ["HTTPS"]).allowedSchemes == limits.allowedSchemes.subtracting(["http+unix", "wss"]))
    }

    /// Header names that differ only by case are one field; names that differ by a bit that is a
    /// case bit only for letters (`@`/`` ` ``, `[`/`{`, `^`/`~`), or by a non-ASCII letter's case,
    /// are different fields. Values, ASCII or not, are kept byte for byte.
    @Test func headerNamesDifferingByNonLettersAreDifferentFields() throws {
        let url = try #require(URL(string: "http://127.0.0.1/h"))
        let fields: [(String, String)] = [
            ("X@", "at"), ("X`", "grave"), ("x[", "bracket"), ("X{", "brace"), ("A^", "caret"), ("a~", "tilde"),
            ("Ünï", "upper"), ("ünï", "lower"), ("X-Value", "café ☕"), ("x-value", "naïve"),
            ("content-LENGTH", "5"), ("Content-Length", "5"),
        ]
        // As an array (read through its buffer) and as a sequence that is not contiguous.
        let heads = [
            Response(statusCode: 200, data: Data(), request: nil, url: url, headerFields: fields),
            Response(statusCode: 200, data: Data(), request: nil, url: url, headerFields: fields.lazy.map { $0 }),
        ]
        for head in heads {
            #expect(head.value(forHTTPHeaderField: "x@") == "at")
            #expect(head.value(forHTTPHeaderField: "x`") == "grave")
            #expect(head.value(forHTTPHeaderField: "X[") == "bracket")
            #expect(head.value(forHTTPHeaderField: "x{") == "brace")
            #expect(head.value(forHTTPHeaderField: "a^") == "caret")
            #expect(head.value(forHTTPHeaderField: "A~") == "tilde")
            #expect(head.value(forHTTPHeaderField: "Ünï") == "upper")
            #expect(head.value(forHTTPHeaderField: "ünï") == "lower")
            #expect(head.value(forHTTPHeaderField: "ÜNÏ") == nil)
            #expect(head.value(forHTTPHeaderField: "X-VALUE") == "café ☕, naïve")
            // Two Content-Length fields in odd casing are one value that is not a number: no
            // announced length (not 5, not 55).
            #expect(head.value(forHTTPHeaderField: "Content-length") == "5, 5")
            #expect(head.expectedContentLength == -1)
        }
    }

    /// A hostile head of 40,000 distinct field names (and 40,000 repeats of one) is read in time
    /// linear in its size: each field looked for among the earlier ones by a scan took minutes
    /// (tens of seconds for 16,000 fields) in a debug build, on the cooperative pool.
    @Test(.timeLimit(.minutes(1))) func aHeadOfTensOfThousandsOfFieldsIsReadInLinearTime() throws {
        let url = try #require(URL(string: "http://127.0.0.1/flood"))
        let count = 40_000
        var fields: [(String, String)] = []
        fields.reserveCapacity(2 * count + 4)
        for index in 0..<count { fields.append(("x-\(index)", "\(index)")) }
        for _ in 0..<count { fields.append(("Set-Cookie", "a")) }
        // Past the scanned names: still one field for names differing only by case, two for
        // names differing by a non-letter.
        fields += [("X-1", "again"), ("X@", "at"), ("X`", "grave"), ("set-COOKIE", "b")]
        let head = Response(statusCode: 200, data: Data(), request: nil, url: url, headerFields: fields)
        #expect(head.value(forHTTPHeaderField: "X-0") == "0")
        #expect(head.value(forHTTPHeaderField: "x-1") == "1, again")
        #expect(head.value(forHTTPHeaderField: "x-39999") == "39999")
        #expect(head.value(forHTTPHeaderField: "x@") == "at")
        #expect(head.value(forHTTPHeaderField: "x`") == "grave")
        let cookies = try #require(head.value(forHTTPHeaderField: "set-cookie"))
        #expect(cookies.utf8.count == count * 3 - 2 + 3)
        #expect(cookies.hasPrefix("a, a, ") && cookies.hasSuffix(", a, b"))
        // The same answer through a sequence that is not contiguous.
        let lazy = Response(statusCode: 200, data: Data(), request: nil, url: url, headerFields: fields.lazy.map { $0 })
        #expect(lazy.value(forHTTPHeaderField: "x-1") == "1, again")
        #expect(lazy.value(forHTTPHeaderField: "SET-COOKIE") == cookies)
    }
}
