import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct AccessTokenAndCredentialsTests {
    enum API: AccessTokenAuthorizable {
        case bearer, basic, custom, none, preset
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "me" }
        var headers: [String: String] { self == .preset ? ["authorization": "Bearer old"] : [:] }
        var authorizationType: AuthorizationType? {
            switch self {
            case .bearer, .preset: .bearer
            case .basic: .basic
            case .custom: .custom("Token")
            case .none: nil
            }
        }
    }

    @Test(arguments: [
        (API.bearer, "Bearer t0k"), (.basic, "Basic t0k"), (.custom, "Token t0k"), (.preset, "Bearer t0k"),
    ])
    func schemes(target: API, expected: String) async throws {
        let transport = RecordingTransport()
        let provider = Provider<API>(transport: transport, plugins: [.accessToken { _ in "t0k" }])
        _ = try await provider.request(target)
        let sent = try #require(transport.sent.first)
        #expect(sent.value(forHTTPHeaderField: "Authorization") == expected)
        // Replaced, never duplicated.
        #expect(sent.allHTTPHeaderFields?.keys.filter { $0.lowercased() == "authorization" }.count == 1)
    }

    @Test func targetsWithoutATypeGetNoToken() async throws {
        let transport = RecordingTransport()
        let provider = Provider<MultiTarget>(transport: transport, plugins: [.accessToken { _ in "t0k" }])
        _ = try await provider.request(MultiTarget(API.none))
        _ = try await provider.request(MultiTarget(TestAPI.plain))
        _ = try await provider.request(MultiTarget(API.bearer))
        #expect(transport.sent.map { $0.value(forHTTPHeaderField: "Authorization") } == [nil, nil, "Bearer t0k"])
    }

    @Test func tokenFailureStopsTheRequest() async {
        struct Locked: Error {}
        let transport = RecordingTransport()
        let provider = Provider<API>(transport: transport, plugins: [.accessToken { _ in throw Locked() }])
        await #expect(throws: CourierError.self) { try await provider.request(.bearer) }
        #expect(transport.sent.isEmpty)
    }

    @Test func credentialsAreSentUpFront() async throws {
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            transport: transport,
            plugins: [.credentials { target in (target as? TestAPI) == .plain ? ("ada", "p:ss") : nil }])
        _ = try await provider.request(.plain)
        _ = try await provider.request(.item(id: 1))
        let expected = "Basic " + Data("ada:p:ss".utf8).base64EncodedString()
        #expect(transport.sent.map { $0.value(forHTTPHeaderField: "Authorization") } == [expected, nil])
    }
}

extension TestAPI: Equatable {
    static func == (lhs: TestAPI, rhs: TestAPI) -> Bool { lhs.path == rhs.path && lhs.method == rhs.method }
}
