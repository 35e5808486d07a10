import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Redirects against the local httpbin; `localhost` is another origin than `127.0.0.1`.
@Suite(.enabled(if: HTTPBin.isAvailable, "needs COURIER_HTTPBIN_URL (run scripts/test)"), .timeLimit(.minutes(2)))
struct IntegrationRedirectTests {
    let provider = Provider<Bin>()

    private var otherOrigin: String {
        var components = URLComponents(url: HTTPBin.baseURL!, resolvingAgainstBaseURL: false)!
        components.host = "localhost"
        return components.url!.absoluteString
    }

    private func redirect(to url: String, status: Int) -> String {
        let encoded = url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? url
        return "redirect-to?url=\(encoded)&status_code=\(status)"
    }

    @Test(arguments: [307, 308])
    func repeatingRedirectsKeepMethodAndBody(status: Int) async throws {
        let target = Bin(
            path: redirect(to: "/anything/after", status: status), method: .post,
            task: .json(Item(id: 7, name: "kept")), validation: .successCodes)
        let echo = try await provider.request(target).map(Echo.self)
        #expect(echo.method == "POST")
        #expect(echo.json == .object(["id": .number(7), "name": .string("kept")]))
        #expect(echo.url.hasSuffix("/anything/after"))
    }

    /// A body stream set by a request mapping is read by the first hop: a 307 or 308 that would
    /// send it again ends the call with a typed error, never with an empty body sent as the
    /// request's (found by review).
    @Test(arguments: [307, 308])
    func aBodyStreamIsNotRepeatedByARedirect(status: Int) async {
        let streaming = Provider<Bin>(requestClosure: { endpoint in
            var request = try endpoint.urlRequest()
            request.httpBody = nil
            request.httpBodyStream = InputStream(data: Data("sent once".utf8))
            return request
        })
        let target = Bin(
            path: redirect(to: "/anything/after", status: status), method: .post, task: .data(Data("x".utf8)),
            validation: .successCodes)
        await #expect {
            try await streaming.request(target)
        } throws: { error in
            guard case CourierError.underlying(let underlying, _) = error else { return false }
            return (underlying as? URLError)?.code == .requestBodyStreamExhausted
        }
    }

    @Test(arguments: [302, 307])
    func credentialsDoNotFollowToAnotherOrigin(status: Int) async throws {
        let target = Bin(
            path: redirect(to: otherOrigin + "/anything", status: status),
            method: status == 307 ? .post : .get,
            headers: [
                "Authorization": "Bearer secret", "Cookie": "session=1", "Proxy-Authorization": "Basic x",
                "X-Api-Key": "k3y", "X-Keep": "kept",
            ], validation: .successCodes)
        let headers = try await provider.request(target).map([String: String].self, atKeyPath: "headers")
        #expect(headers["Host"]?.hasPrefix("localhost") == true)
        #expect(headers["Authorization"] == nil)
        #expect(headers["Cookie"] == nil)
        #expect(headers["Proxy-Authorization"] == nil)
        #expect(headers["X-Api-Key"] == nil)
        #expect(headers["X-Keep"] == "kept")
    }

    @Test func credentialsFollowWithinTheOrigin() async throws {
        let target = Bin(
            path: redirect(to: "/headers", status: 302), headers: ["Authorization": "Bearer secret"],
            validation: .successCodes)
        let headers = try await provider.request(target).map([String: String].self, atKeyPath: "headers")
        #expect(headers["Authorization"] == "Bearer secret")
    }

    // Each hop of a loop is a URLSession task of its own; with the whole suite running (under a
    // sanitizer, on 2 cores) FoundationNetworking's one work queue starts them slowly: the bound is
    // there to end a hang, not to time the loop.
    @Test func repeatingRedirectLoopEndsWithATypedError() async {
        // The first answer points at a URL whose own (empty) Location is itself: a 307 loop.
        let loop = Bin(
            path: "redirect-to?url=%3Furl%3D%26status_code%3D307&status_code=307", method: .post,
            task: .data(Data("body".utf8)), timeout: .seconds(100))
        await #expect {
            try await provider.request(loop)
        } throws: { error in
            guard case CourierError.underlying(let underlying, _) = error else { return false }
            return (underlying as? URLError)?.code == .httpTooManyRedirects
        }
    }

    @Test func followedRedirectLoopEndsWithATypedError() async {
        await #expect {
            try await provider.request(Bin(path: "absolute-redirect/30", timeout: .seconds(100)))
        } throws: { error in
            guard case CourierError.underlying(let underlying, _) = error else { return false }
            return (underlying as? URLError)?.code == .httpTooManyRedirects
        }
    }
}
