import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A plugin that forwards every hook to the plugins it wraps, as Moya users write them: with one
/// spelling per hook, what it forwards must answer exactly as the plugins do alone.
private struct Forwarding: Plugin {
    let plugins: [any Plugin]

    func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
        var request = request
        for plugin in plugins { request = try await plugin.prepare(request, context: context) }
        return request
    }

    func willSend(_ request: URLRequest, context: RequestContext) async {
        for plugin in plugins { await plugin.willSend(request, context: context) }
    }

    func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {
        for plugin in plugins { await plugin.didReceive(result, context: context) }
    }

    func willRetry(_ request: URLRequest, after error: CourierError, delay: Duration, context: RequestContext) async {
        for plugin in plugins { await plugin.willRetry(request, after: error, delay: delay, context: context) }
    }

    func willRefreshCredential(_ request: URLRequest, context: RequestContext) async {
        for plugin in plugins { await plugin.willRefreshCredential(request, context: context) }
    }

    func process(
        _ result: Result<Response, CourierError>, context: RequestContext
    ) async -> Result<Response, CourierError> {
        var result = result
        for plugin in plugins { result = await plugin.process(result, context: context) }
        return result
    }

    func didFinish(_ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext) async {
        for plugin in plugins { await plugin.didFinish(result, metrics: metrics, context: context) }
    }
}

@Suite(.timeLimit(.minutes(2))) struct PluginForwardingTests {
    enum API: AccessTokenAuthorizable {
        case user
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "user" }
        var method: HTTPMethod { .get }
        var task: HTTPTask { .plain }
        var headers: [String: String] { [:] }
        var validation: ValidationType { .successCodes }
        var authorizationType: AuthorizationType? { .bearer }
    }

    enum BuiltIn: String, CaseIterable, Sendable {
        case logger, accessToken, credentials, networkActivity
    }

    /// What a call shows of its plugins: the lines logged, the activity seen, and the headers sent
    /// with each attempt (a 503 retried, then a 200).
    private func observe(_ builtIn: BuiltIn, forwarded: Bool) async throws -> [String] {
        let log = EventLog()
        let plugin: any Plugin =
            switch builtIn {
            case .logger: .logger(.verbose, output: { log.append($0) })
            case .accessToken: .accessToken { _ in "t0k3n" }
            case .credentials: .credentials { _ in ("ada", "secret") }
            case .networkActivity: .networkActivity { change, target in log.append("\(change) \(target)") }
            }
        let attempts = EventLog()
        let transport = RecordingTransport { request in
            attempts.append("sent Authorization: \(request.value(forHTTPHeaderField: "Authorization") ?? "-")")
            return Response(statusCode: attempts.all.count == 1 ? 503 : 200, data: Data("ok".utf8), request: request)
        }
        let provider = Provider<API>(
            transport: transport, plugins: [forwarded ? Forwarding(plugins: [plugin]) : plugin],
            clock: ImmediateClock(), retryPolicy: RetryPolicy(baseDelay: .zero, jitter: .none))
        _ = try await provider.request(.user)
        // The call's id differs between the two providers; everything else must not.
        return log.all.map { $0.replacing(/#[0-9a-f-]+/, with: "#") } + attempts.all
    }

    @Test(arguments: BuiltIn.allCases)
    func aForwardingPluginAnswersAsTheBuiltInDoesAlone(_ builtIn: BuiltIn) async throws {
        let alone = try await observe(builtIn, forwarded: false)
        let forwarded = try await observe(builtIn, forwarded: true)
        #expect(forwarded == alone)
        switch builtIn {
        case .logger:
            #expect(alone.filter { $0.contains("→ GET https://api.example.com/user") }.count == 2)
            #expect(alone.contains { $0.contains("↻ attempt 1 failed (status 503); attempt 2 in") })
        case .accessToken: #expect(alone.filter { $0 == "sent Authorization: Bearer t0k3n" }.count == 2)
        case .credentials: #expect(alone.filter { $0.hasPrefix("sent Authorization: Basic ") }.count == 2)
        case .networkActivity: #expect(alone.filter { $0.hasPrefix("began") }.count == 2)
        }
    }

    @Test func aPluginCalledDirectlyWithAContextAnswers() async throws {
        // Moya's own logger spec calls `willSend(_:target:)` on the logger directly; in Courier that
        // spelling does not compile, and the context form answers.
        let log = EventLog()
        let logger = NetworkLoggerPlugin.logger(.default, output: { log.append($0) })
        let context = RequestContext(target: API.user)
        #expect(context.attempt == 1)
        let request = URLRequest(url: URL(string: "https://api.example.com/user")!)
        await logger.willSend(request, context: context)
        await Forwarding(plugins: [logger]).willSend(request, context: context)
        #expect(log.all == ["→ GET https://api.example.com/user", "→ GET https://api.example.com/user"])
        #expect(RequestContext(target: API.user).id != context.id)
    }
}
