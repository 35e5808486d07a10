import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct RedirectRuleTests {
    @Test(arguments: [
        ("https://a.example/x", "https://a.example:443/y", true),
        ("http://a.example/x", "http://A.EXAMPLE:80/y", true),
        ("https://a.example/x", "http://a.example/x", false),
        ("https://a.example/x", "https://b.example/x", false),
        ("https://a.example/x", "https://a.example:8443/x", false),
        ("http://127.0.0.1:8080/", "http://localhost:8080/", false),
    ])
    func origins(a: String, b: String, same: Bool) {
        #expect(Redirects.sameOrigin(URL(string: a)!, URL(string: b)!) == same)
    }

    @Test func credentialsAreStrippedOnlyAcrossOrigins() {
        var request = URLRequest(url: URL(string: "https://b.example/next")!)
        for header in ["Authorization", "Proxy-Authorization", "Cookie", "x-api-key", "X-Keep"] {
            request.setValue("v", forHTTPHeaderField: header)
        }
        let headers = Limits.defaultCredentialHeaders
        let across = Redirects.strippingCredentials(
            request, from: URL(string: "https://a.example/start"), headers: headers)
        #expect(across.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(across.value(forHTTPHeaderField: "Proxy-Authorization") == nil)
        #expect(across.value(forHTTPHeaderField: "Cookie") == nil)
        // An API key travels in a header of its own: it is a credential too (it followed before).
        #expect(across.value(forHTTPHeaderField: "X-API-Key") == nil)
        #expect(across.value(forHTTPHeaderField: "X-Keep") == "v")
        let same = Redirects.strippingCredentials(
            request, from: URL(string: "https://b.example/start"), headers: headers)
        #expect(same.value(forHTTPHeaderField: "Authorization") == "v")
        #expect(same.value(forHTTPHeaderField: "X-API-Key") == "v")
    }

    /// The set is the caller's: a header of its own added, one it trusts taken out, names in any case.
    @Test func theCredentialHeadersAreTheLimitsOwn() {
        var request = URLRequest(url: URL(string: "https://b.example/next")!)
        for header in ["Authorization", "X-Tenant-Secret", "X-API-Key"] {
            request.setValue("v", forHTTPHeaderField: header)
        }
        var limits = Limits()
        limits.credentialHeaders.insert("x-tenant-secret")
        limits.credentialHeaders.remove("X-API-Key")
        let across = Redirects.strippingCredentials(
            request, from: URL(string: "https://a.example/start"), headers: limits.credentialHeaders)
        #expect(across.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(across.value(forHTTPHeaderField: "X-Tenant-Secret") == nil)
        #expect(across.value(forHTTPHeaderField: "X-API-Key") == "v")
        let none = Redirects.strippingCredentials(request, from: URL(string: "https://a.example/start"), headers: [])
        #expect(none.value(forHTTPHeaderField: "Authorization") == "v")
    }

    /// What the logger hides, a redirect does not carry to another origin: every request header
    /// among the redaction policy's secrets is a credential header (`Set-Cookie` and the webhook
    /// signatures are response headers).
    @Test func theCredentialHeadersAreTheRequestHeadersTheRedactionPolicyHides() {
        let responseOnly: Set<String> = ["Set-Cookie", "X-Hub-Signature", "X-Hub-Signature-256"]
        #expect(Limits.defaultCredentialHeaders == RedactionPolicy.defaultHeaders.subtracting(responseOnly))
    }
}
