// Calling a hook in Moya's spelling (a composite plugin forwarding to the plugins it wraps, a test
// calling the logger directly as Moya's own logger spec does) did nothing; now it is an error
// whose fix-it renames it to the context form.
// expect-error: 'willSend(_:target:)' has been renamed to 'willSend(_:context:)'
// expect-error: 'process(_:target:)' has been renamed to 'process(_:context:)'
// expect-error: 'prepare(_:target:)' has been renamed to 'prepare(_:context:)'
// expect-error: 'didReceive(_:target:)' has been renamed to 'didReceive(_:context:)'
// expect-fixit: target -> context
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Composite: Plugin {
    let plugins: [any Plugin]

    func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
        let target = context.target
        var request = request
        for plugin in plugins { request = try await plugin.prepare(request, target: target) }
        return request
    }

    func willSend(_ request: URLRequest, context: RequestContext) async {
        let target = context.target
        for plugin in plugins { await plugin.willSend(request, target: target) }
    }

    func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {
        let target = context.target
        for plugin in plugins { await plugin.didReceive(result, target: target) }
    }

    func process(
        _ result: Result<Response, CourierError>, context: RequestContext
    ) async -> Result<Response, CourierError> {
        let target = context.target
        let logger = NetworkLoggerPlugin.logger()
        return await logger.process(result, target: target)
    }
}
