import Courier
import CourierLogging
import Foundation
import Logging
import Testing

/// `.swiftLog(_:)` writes NetworkLoggerPlugin's lines into a swift-log `Logger`, redacted.
@Suite struct SwiftLogTests {
    enum API: TargetType {
        case user(String)
        case login(password: String)
        case broken
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String {
            switch self {
            case .user(let name): "users/\(name)"
            case .login: "login"
            case .broken: "broken"
            }
        }
        var method: HTTPMethod {
            if case .login = self { return .post }
            return .get
        }
        var task: HTTPTask {
            if case .login(let password) = self {
                return .parameters(["token": .string(password)], encoding: .queryString)
            }
            return .plain
        }
        var headers: [String: String] {
            if case .login = self { return ["Authorization": "Bearer secret-token"] }
            return [:]
        }
        var validation: ValidationType { .successCodes }
        var sampleResponse: SampleResponse {
            switch self {
            case .user, .login: .networkResponse(200, Data("{}".utf8))
            case .broken: .networkResponse(503, Data())
            }
        }
    }

    @Test func everyLineIsOneEntryAtTheChosenLevel() async throws {
        let store = InMemoryLogHandler.Store()
        let logger = Logger(label: "courier") { _ in InMemoryLogHandler(store: store) }
        let provider = Provider<API>(stubClosure: Provider.immediatelyStub, plugins: [.swiftLog(logger, level: .info)])
        _ = try await provider.request(.user("ada"))
        #expect(store.entries.map(\.level) == [.info, .info])
        #expect(
            store.entries.map(\.message) == [
                "[#1 API.user] → GET https://api.example.com/users/ada",
                "[#1 API.user] ← 200 https://api.example.com/users/ada (2 bytes)",
            ])
    }

    @Test func secretsAreRedactedWithTheLoggersOptions() async throws {
        let store = InMemoryLogHandler.Store()
        let logger = Logger(label: "courier") { _ in InMemoryLogHandler(store: store) }
        let plugin: NetworkLoggerPlugin = .swiftLog(logger, options: [.method, .url, .requestHeaders])
        let provider = Provider<API>(stubClosure: Provider.immediatelyStub, plugins: [plugin])
        _ = try await provider.request(.login(password: "hunter2"))
        let text = store.entries.map(\.message).joined(separator: "\n")
        #expect(!text.contains("hunter2"))
        #expect(!text.contains("secret-token"))
        #expect(text.contains("Authorization: <redacted>"))
        #expect(text.contains("token=%3Credacted%3E") || text.contains("token=<redacted>"))
    }

    @Test func theDefaultLevelIsDebugAndFailuresAreLogged() async throws {
        let store = InMemoryLogHandler.Store()
        let logger = Logger(label: "courier") { _ in InMemoryLogHandler(store: store) }
        let provider = Provider<API>(stubClosure: Provider.immediatelyStub, plugins: [.swiftLog(logger)])
        _ = try? await provider.request(.broken)
        #expect(store.entries.map(\.level) == [.debug, .debug])
        #expect(store.entries.last?.message.contains("503") == true)
    }

    @Test func nothingIsFormattedWhileTheLoggersLevelIsOff() async throws {
        let store = InMemoryLogHandler.Store()
        let formatted = InMemoryLogHandler.Store()
        var logger = Logger(label: "courier") { _ in InMemoryLogHandler(store: store) }
        logger.logLevel = .info
        let plugin: NetworkLoggerPlugin = .swiftLog(
            logger, level: .debug, options: [.method, .url, .successResponseBody, .requestHeaders],
            responseBodyFormatter: { body, _ in
                formatted.append(.debug, "formatted")
                return String(decoding: body, as: UTF8.self)
            })
        let provider = Provider<API>(stubClosure: Provider.immediatelyStub, plugins: [plugin])
        _ = try await provider.request(.user("ada"))
        #expect(store.entries.isEmpty)
        #expect(formatted.entries.isEmpty)

        logger.logLevel = .debug
        let enabled = Provider<API>(
            stubClosure: Provider.immediatelyStub,
            plugins: [
                .swiftLog(
                    logger, level: .debug, options: [.successResponseBody],
                    responseBodyFormatter: { _, _ in
                        formatted.append(.debug, "formatted")
                        return "{}"
                    })
            ])
        _ = try await enabled.request(.user("ada"))
        #expect(store.entries.map(\.message) == ["  body: {}"])
        #expect(formatted.entries.count == 1)
    }
}
