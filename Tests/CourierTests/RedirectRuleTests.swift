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
        for header in ["Authorization", "Proxy-Authorization", "Cookie", "X-Keep"] {
            request.setValue("v", forHTTPHeaderField: header)
        }
        let across = Redirects.strippingCredentials(request, from: URL(string: "https://a.example/start"))
        #expect(across.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(across.value(forHTTPHeaderField: "Proxy-Authorization") == nil)
        #expect(across.value(forHTTPHeaderField: "Cookie") == nil)
        #expect(across.value(forHTTPHeaderField: "X-Keep") == "v")
        let same = Redirects.strippingCredentials(request, from: URL(string: "https://b.example/start"))
        #expect(same.value(forHTTPHeaderField: "Authorization") == "v")
    }
}
