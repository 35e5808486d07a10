import Courier
import CourierTesting
import Foundation
import Testing

@testable import CourierMetrics

/// `.swiftMetrics()` counts, times and records the attempts of every call, with four bounded
/// dimensions.
@Suite struct SwiftMetricsPluginTests {
    enum API: TargetType, Equatable {
        case user(String)
        case create
        case broken
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String {
            switch self {
            case .user(let name): "users/\(name)"
            case .create: "users"
            case .broken: "broken"
            }
        }
        var method: HTTPMethod { self == .create ? .post : .get }
        var headers: [String: String] { [:] }
        var validation: ValidationType { .successCodes }
        var sampleResponse: SampleResponse {
            switch self {
            case .user: .networkResponse(200, Data("{}".utf8))
            case .create: .networkResponse(201, Data())
            case .broken: .networkResponse(503, Data())
            }
        }
    }

    func dimensions(
        _ target: String, _ method: String, _ status: String, _ outcome: String, cache: String = "network"
    ) -> [(String, String)] {
        [("target", target), ("method", method), ("status_class", status), ("outcome", outcome), ("cache", cache)]
    }

    @Test func everyCallIsCountedTimedAndItsAttemptsRecorded() async throws {
        let metrics = InMemoryMetrics()
        let provider = Provider<API>(
            stubClosure: Provider.immediatelyStub, plugins: [.swiftMetrics(factory: metrics)])
        _ = try await provider.request(.user("ada"))
        _ = try await provider.request(.user("grace"))
        _ = try await provider.request(.create)
        _ = try? await provider.request(.broken)

        let ok = dimensions("API.user", "GET", "2xx", "success")
        #expect(metrics.values("courier_requests_total", ok) == [1, 1])
        #expect(metrics.values("courier_request_duration_seconds", ok).count == 2)
        #expect(metrics.values("courier_request_duration_seconds", ok).allSatisfy { $0 >= 0 })
        #expect(metrics.recorded("courier_request_attempts", ok) == [1, 1])
        #expect(metrics.values("courier_requests_total", dimensions("API.create", "POST", "2xx", "success")) == [1])
        let failed = dimensions("API.broken", "GET", "5xx", "failure")
        #expect(metrics.values("courier_requests_total", failed) == [1])
        // Associated values never become dimensions.
        #expect(!metrics.keys.contains { $0.dimensions.joined().contains("ada") })
    }

    @Test func aCancelledCallHasNoStatusClass() async throws {
        let metrics = InMemoryMetrics()
        let provider = Provider<API>(
            stubClosure: Provider.delayedStub(.seconds(3600)),
            plugins: [.swiftMetrics(factory: metrics, labelPrefix: "api")])
        let call = Task { try await provider.request(.user("ada")) }
        call.cancel()
        _ = try? await call.value
        #expect(
            metrics.values("api_requests_total", dimensions("API.user", "GET", "none", "cancelled", cache: "none")) == [
                1
            ])
    }

    @Test func cacheHitsHaveTheirOwnCacheDimension() async throws {
        let metrics = InMemoryMetrics()
        let transport = StubTransport()
        transport.on(.get, "users/ada", .data(Data("{}".utf8), headers: ["Cache-Control": "max-age=600"]))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let provider = Provider<API>(
            transport: transport, plugins: [.swiftMetrics(factory: metrics)], cache: HTTPCache(now: { now }))
        _ = try await provider.request(.user("ada"))
        _ = try await provider.request(.user("ada"))
        _ = try await provider.request(.user("ada"))

        #expect(transport.requests.count == 1)
        let network = dimensions("API.user", "GET", "2xx", "success", cache: "network")
        let hit = dimensions("API.user", "GET", "2xx", "success", cache: "hit")
        #expect(metrics.values("courier_requests_total", network) == [1])
        #expect(metrics.values("courier_requests_total", hit) == [1, 1])
        #expect(metrics.values("courier_request_duration_seconds", hit).count == 2)
    }

    @Test func theCacheDimensionNamesEveryCacheStatus() {
        let statuses = [CacheStatus.network, .hit, .revalidated, .staleAfterError]
        let values = statuses.map { status in
            var transfer = TransferMetrics()
            transfer.cacheStatus = status
            return SwiftMetricsPlugin.cache(
                of: .success(Response(statusCode: 200, data: Data(), transferMetrics: transfer)))
        }
        #expect(values == ["network", "hit", "revalidated", "stale_after_error"])
        #expect(SwiftMetricsPlugin.cache(of: .failure(.underlying(URLError(.notConnectedToInternet), nil))) == "none")
    }

    @Test func connectionPhasesAreTimedWhenTheTransportReportsThem() async throws {
        let metrics = InMemoryMetrics()
        let transport = StubTransport()
        transport.on(
            .get, "users/ada",
            .handler { request in
                Response(
                    statusCode: 200, data: Data(), request: request,
                    transferMetrics: TransferMetrics(
                        connectionReused: false, domainLookup: .milliseconds(3), connect: .milliseconds(12)))
            })
        transport.on(.get, "users/grace", .status(200))
        let provider = Provider<API>(transport: transport, plugins: [.swiftMetrics(factory: metrics)])
        _ = try await provider.request(.user("ada"))
        _ = try await provider.request(.user("grace"))
        let ok = dimensions("API.user", "GET", "2xx", "success")
        #expect(metrics.values("courier_dns_lookup_duration_seconds", ok) == [3_000_000])
        #expect(metrics.values("courier_connect_duration_seconds", ok) == [12_000_000])
        #expect(metrics.values("courier_tls_handshake_duration_seconds", ok).isEmpty)
    }

    @Test(arguments: [(200, "2xx"), (302, "3xx"), (404, "4xx"), (599, "5xx"), (99, "other"), (600, "other")])
    func statusClasses(code: Int, expected: String) {
        let response = Response(statusCode: code, data: Data())
        #expect(SwiftMetricsPlugin.statusClass(of: .success(response)) == expected)
    }

    @Test func nanosecondsSaturate() {
        #expect(SwiftMetricsPlugin.nanoseconds(.milliseconds(1500)) == 1_500_000_000)
        #expect(SwiftMetricsPlugin.nanoseconds(.seconds(Int64.max)) == .max)
    }
}
