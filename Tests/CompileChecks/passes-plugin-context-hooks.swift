// Plugins in the one spelling: every hook with its context, a composite forwarding to the plugins
// it wraps, a hook called directly with a context made for it, and the built-in plugins.
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Composite: Plugin {
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

    func process(
        _ result: Result<Response, CourierError>, context: RequestContext
    ) async -> Result<Response, CourierError> {
        var result = result
        for plugin in plugins { result = await plugin.process(result, context: context) }
        return result
    }
}

enum API: TargetType {
    case user
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "user" }
    var method: HTTPMethod { .get }
    var task: HTTPTask { .plain }
    var headers: [String: String] { [:] }
}

func use() async {
    let composite = Composite(plugins: [
        .logger(), .accessToken { _ in "token" }, .credentials { _ in nil }, .networkActivity(),
    ])
    let request = URLRequest(url: URL(string: "https://api.example.com/user")!)
    await composite.willSend(request, context: RequestContext(target: API.user))
    _ = Provider<API>(plugins: [composite])
}
