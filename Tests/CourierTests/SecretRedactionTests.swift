import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Secrets never reach the logger's output.
@Suite struct SecretRedactionTests {
    struct Secretive: TargetType {
        var headers: [String: String] { [:] }
        var baseURL: URL { URL(string: "https://alice:hunter2@api.example.com/v1?api_key=K3Y&page=2")! }
        var path: String { "search?q=x&access_token=T0KEN&Password=PW" }
    }

    @Test func userInfoAndSecretQueryItemsAreRedactedEverywhere() async throws {
        let lines = Locked<[String]>([])
        let logger = NetworkLoggerPlugin(
            configuration: .init(
                options: [.method, .url, .responseStatus, .cURL], redactedQueryItems: ["q"],
                output: { line in lines.withLock { $0.append(line) } }))
        let provider = Provider<Secretive>(stubClosure: Provider.immediatelyStub, plugins: [logger])
        _ = try await provider.request(Secretive())
        let text = lines.withLock { $0.joined(separator: "\n") }
        for secret in ["hunter2", "alice", "K3Y", "T0KEN", "PW", "q=x"] {
            #expect(!text.contains(secret), "\(secret) in \(text)")
        }
        #expect(text.contains("page=2"))
        #expect(text.contains("api_key=<redacted>"))
        #expect(text.contains("<redacted>@api.example.com"))
    }

    @Test func errorDescriptionsRedactURLs() {
        let error = CourierError.schemeNotAllowed(URL(string: "ftp://u:secret@h/x?token=abc")!)
        #expect(!error.localizedDescription.contains("secret"))
        #expect(!error.localizedDescription.contains("abc"))
    }

    @Test func cookiesAreOffByDefault() {
        let configuration = URLSessionTransport.defaultConfiguration()
        #expect(configuration.httpCookieStorage == nil)
        #expect(configuration.httpShouldSetCookies == false)
    }
}
