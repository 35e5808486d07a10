import Courier
import Foundation
import Logging
import MetricsTestKit
import Testing

@testable import Observability

/// The example in `Sources/Observability` logs and counts calls, without a global bootstrap.
@Suite struct ObservabilityTests {
    enum API: TargetType {
        case user(String)
        case broken
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String {
            switch self {
            case .user(let name): "users/\(name)"
            case .broken: "broken"
            }
        }
        var headers: [String: String] { [:] }
        var validation: ValidationType { .successCodes }
        var sampleResponse: SampleResponse {
            switch self {
            case .user: .networkResponse(200, Data("{}".utf8))
            case .broken: .networkResponse(503, Data())
            }
        }
    }

    /// A swift-log handler that keeps what it is given.
    struct Capture: LogHandler {
        let entries: Entries
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        // @unchecked: `stored` is only touched under `lock`.
        final class Entries: @unchecked Sendable {
            private let lock = NSLock()
            private var stored: [(Logger.Level, String)] = []
            var all: [(Logger.Level, String)] { lock.withLock { stored } }
            func append(_ entry: (Logger.Level, String)) { lock.withLock { stored.append(entry) } }
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            entries.append((event.level, "\(event.message)"))
        }
    }

    static func dimensions(_ target: String, _ status: String, _ outcome: String) -> [(String, String)] {
        // Stubbed calls have no cache: `cache` is `network`.
        [("target", target), ("method", "GET"), ("status_class", status), ("outcome", outcome), ("cache", "network")]
    }

    @Test func networkLoggerLinesGoToSwiftLog() async throws {
        let entries = Capture.Entries()
        let logger = Logger(label: "courier") { _ in Capture(entries: entries) }
        let provider: Provider<API> = observedProvider(
            logger: logger, metrics: TestMetrics(), stubClosure: Provider.immediatelyStub)
        _ = try await provider.request(.user("ada"))
        #expect(entries.all.map(\.0) == [.info, .info])
        #expect(
            entries.all.map(\.1) == [
                "[#1 API.user] → GET https://api.example.com/users/ada",
                "[#1 API.user] ← 200 https://api.example.com/users/ada (2 bytes)",
            ])
    }

    @Test func everyCallIsCountedAndTimedPerTargetAndOutcome() async throws {
        let metrics = TestMetrics()
        let logger = Logger(label: "courier") { _ in SwiftLogNoOpLogHandler() }
        let provider: Provider<API> = observedProvider(
            logger: logger, metrics: metrics, stubClosure: Provider.immediatelyStub)
        _ = try await provider.request(.user("ada"))
        _ = try await provider.request(.user("grace"))
        _ = try? await provider.request(.broken)

        let ok = try metrics.expectCounter("courier_requests_total", Self.dimensions("API.user", "2xx", "success"))
        #expect(ok.totalValue == 2)
        let failed = try metrics.expectCounter(
            "courier_requests_total", Self.dimensions("API.broken", "5xx", "failure"))
        #expect(failed.totalValue == 1)
        let timer = try metrics.expectTimer(
            "courier_request_duration_seconds", Self.dimensions("API.user", "2xx", "success"))
        #expect(timer.values.count == 2)
        #expect(timer.values.allSatisfy { $0 >= 0 })
        let attempts = try metrics.expectRecorder(
            "courier_request_attempts", Self.dimensions("API.broken", "5xx", "failure"))
        #expect(attempts.lastValue == 1)
    }
}
