import Courier
import Foundation
import Testing

@Suite struct URLRulesTests {
    @Test(arguments: [
        // Empty path: the base URL unchanged, query kept, no slash added.
        ("https://api.example.com", "", "https://api.example.com"),
        ("https://api.example.com/v1", "", "https://api.example.com/v1"),
        ("https://api.example.com/v1/", "", "https://api.example.com/v1/"),
        ("https://api.example.com/v1?key=abc", "", "https://api.example.com/v1?key=abc"),
        // Exactly one slash between base and path.
        ("https://api.example.com", "users", "https://api.example.com/users"),
        ("https://api.example.com/", "users", "https://api.example.com/users"),
        ("https://api.example.com/v1", "/users", "https://api.example.com/v1/users"),
        ("https://api.example.com/v1/", "/users", "https://api.example.com/v1/users"),
        ("https://api.example.com/v1//", "//users", "https://api.example.com/v1/users"),
        ("https://api.example.com/v1", "users/42/repos", "https://api.example.com/v1/users/42/repos"),
        ("https://api.example.com/v1", "users/", "https://api.example.com/v1/users/"),
        // The base URL's own query survives a path.
        ("https://api.example.com/v1?key=abc", "users", "https://api.example.com/v1/users?key=abc"),
        // A ? in the path starts a query; it is never sent as %3F.
        ("https://api.example.com", "search?q=swift", "https://api.example.com/search?q=swift"),
        ("https://api.example.com?key=abc", "search?q=swift", "https://api.example.com/search?key=abc&q=swift"),
        ("https://api.example.com/v1", "?page=2", "https://api.example.com/v1?page=2"),
        // Characters that cannot stand in a path are escaped; escapes already there are kept.
        ("https://api.example.com", "files/my file.txt", "https://api.example.com/files/my%20file.txt"),
        ("https://api.example.com", "files/my%20file.txt", "https://api.example.com/files/my%20file.txt"),
        ("https://api.example.com", "files/100%", "https://api.example.com/files/100%25"),
        ("https://api.example.com", "tags/C#", "https://api.example.com/tags/C%23"),
        ("https://api.example.com", "café", "https://api.example.com/caf%C3%A9"),
        ("https://api.example.com", "a:b@c;d=e", "https://api.example.com/a:b@c;d=e"),
        // Ports, fragments and user info on the base are kept in place.
        ("http://127.0.0.1:8080", "get", "http://127.0.0.1:8080/get"),
        ("https://api.example.com/v1#top", "users", "https://api.example.com/v1/users#top"),
        // Issue 29 (the text is written in one pass): queries, fragments and escapes together.
        (
            "https://api.example.com/v1?key=abc#top", "search?q=a b",
            "https://api.example.com/v1/search?key=abc&q=a%20b#top"
        ),
        ("https://api.example.com/v1?#top", "users", "https://api.example.com/v1/users#top"),
        ("https://api.example.com/v1?key=abc", "?page=2", "https://api.example.com/v1?key=abc&page=2"),
        ("https://api.example.com", "a?b?c#d", "https://api.example.com/a?b?c%23d"),
        ("https://api.example.com", "a?", "https://api.example.com/a"),
        ("https://api.example.com", "/", "https://api.example.com"),
        ("https://api.example.com", "50%25/x%zz", "https://api.example.com/50%25/x%25zz"),
        ("https://api.example.com", "v1.2/file.json", "https://api.example.com/v1.2/file.json"),
        ("https://api.example.com", "...", "https://api.example.com/..."),
        ("https://api.example.com", "%2e%2e%2e/x", "https://api.example.com/%2e%2e%2e/x"),
        ("https://user:pw@api.example.com:8443/v1/", "x", "https://user:pw@api.example.com:8443/v1/x"),
    ])
    func urlFromBaseAndPath(base: String, path: String, expected: String) throws {
        let endpoint = try Endpoint(target: PathTarget(base, path))
        #expect(endpoint.url.absoluteString == expected)
    }

    @Test(arguments: ["api.example.com", "/relative/path", "example"])
    func baseURLWithoutSchemeThrows(base: String) {
        #expect {
            try Endpoint(target: PathTarget(base, "users"))
        } throws: { error in
            guard case CourierError.requestMapping(let reason) = error else { return false }
            return reason.contains("scheme")
        }
    }

    @Test func httpBaseURLWithoutHostThrows() {
        #expect {
            try Endpoint(target: PathTarget("http:///nohost", "users"))
        } throws: { error in
            guard case CourierError.requestMapping(let reason) = error else { return false }
            return reason.contains("host")
        }
    }

    @Test func customSchemesNeedNoHost() throws {
        let endpoint = try Endpoint(target: PathTarget("unix:/var/run/app", "status"))
        #expect(endpoint.url.absoluteString == "unix:/var/run/app/status")
    }

    @Test func queryParametersFollowBaseAndPathQueries() throws {
        struct Target: TargetType {
            var headers: [String: String] { [:] }
            var baseURL: URL { URL(string: "https://api.example.com?key=abc")! }
            var path: String { "search?q=swift" }
            var task: HTTPTask { .parameters(["page": 2], encoding: .queryString) }
        }
        let request = try Endpoint(target: Target()).urlRequest()
        #expect(request.url?.absoluteString == "https://api.example.com/search?key=abc&q=swift&page=2")
    }
}
