import Foundation
import Testing

@testable import Courier

/// The base-URL check reads the scheme and host off the URL's text; it must agree with
/// Foundation's own parse of the same URL.
@Suite struct BaseURLCheckTests {
    @Test(arguments: [
        "https://api.example.com", "HTTPS://API.EXAMPLE.COM/v1", "http://127.0.0.1:8080/get",
        "http://user:secret@example.com/", "http://user@/path", "http:///nohost", "http://:80/",
        "http://[::1]:8080/", "http://[]/", "http:", "http:relative", "https://?q=1", "https://#top",
        "https://a", "http://%20/", "unix:/var/run/app", "localhost:8080/v1", "api.example.com",
        "/relative/path", "example", "a+b-c.d://host", "1http://host", "ftp://files.example.com",
        "mailto:someone@example.com", "http://example.com:notaport/",
    ])
    func agreesWithFoundation(text: String) throws {
        Self.expectAgreementWithFoundation(text)
    }

    /// The base-URL check accepts `text` exactly when Foundation finds a scheme, and a host for
    /// http and https.
    static func expectAgreementWithFoundation(_ text: String) {
        guard let url = URL(string: text) else { return }
        let scheme = url.scheme ?? ""
        let http = ["http", "https"].contains(scheme.lowercased())
        let expected = !scheme.isEmpty && !(http && (url.host ?? "").isEmpty)
        var accepted = true
        do { try URLBuilder.validate(url.absoluteString) } catch { accepted = false }
        #expect(accepted == expected, "\(text): scheme \(url.scheme ?? "nil"), host \(url.host ?? "nil")")
    }

    /// The final request's destination check (issue 29: read off the URL's text too) accepts
    /// exactly what Foundation's `scheme` and `host` accept: an allowed scheme, in any case, and a
    /// host for schemes that start with `http`.
    @Test(arguments: [
        "https://api.example.com", "HTTPS://API.EXAMPLE.COM/v1", "http://127.0.0.1:8080/get",
        "http://user:secret@example.com/", "http://user@/path", "http:///nohost", "http://:80/",
        "http://[::1]:8080/", "http:", "http:relative", "https://?q=1", "https://#top", "https://a",
        "http://%20/", "unix:/var/run/app", "localhost:8080/v1", "api.example.com", "/relative/path",
        "example", "a+b-c.d://host", "ftp://files.example.com", "FTP://files.example.com",
        "mailto:someone@example.com", "httpx://", "httpx://host/", "file:///etc/passwd",
        "https://api.example.com/v1/items/1?q=a#frag", "https://user@host@other/", "gopher://host/",
    ])
    func theDestinationCheckAgreesWithFoundation(text: String) throws {
        guard let url = URL(string: text) else { return }
        // Sets of up to four schemes are compared one by one, larger ones looked up (issue 29):
        // both ways, and the default.
        let allLimits = [
            Limits(allowedSchemes: ["http", "https", "ftp", "unix", "httpx", "mailto"]),
            Limits(allowedSchemes: ["HTTPS", "ftp", "unix"]), Limits(),
        ]
        for limits in allLimits { Self.expectDestinationAgreement(url, text, limits: limits) }
    }

    /// The destination check accepts `url` exactly when Foundation's reading of it says it should:
    /// an allowed scheme, and a host for schemes that start with "http".
    static func expectDestinationAgreement(_ url: URL, _ text: String, limits: Limits) {
        let scheme = url.scheme?.lowercased()
        let expected =
            scheme.map {
                limits.allowedSchemes.contains($0) && !($0.hasPrefix("http") && (url.host ?? "").isEmpty)
            } ?? false
        var accepted = true
        do { try RequestValidation.validateDestination(url, limits: limits) } catch { accepted = false }
        #expect(
            accepted == expected,
            "\(text), \(limits.allowedSchemes): scheme \(url.scheme ?? "nil"), host \(url.host ?? "nil")")
    }

    @Test func aRelativeURLIsCheckedWithItsBase() throws {
        let base = try #require(URL(string: "https://api.example.com/v1/"))
        try RequestValidation.validateDestination(URL(string: "items", relativeTo: base), limits: Limits())
        #expect(throws: CourierError.self) {
            try RequestValidation.validateDestination(
                URL(string: "items", relativeTo: URL(string: "gopher://host/")), limits: Limits())
        }
    }

    @Test func errorsDoNotPrintUserInfo() {
        #expect {
            try URLBuilder.validate("http://user:hunter2@/path")
        } throws: { error in
            guard case CourierError.requestMapping(let reason) = error else { return false }
            return reason.contains("host") && !reason.contains("hunter2")
        }
    }
}
