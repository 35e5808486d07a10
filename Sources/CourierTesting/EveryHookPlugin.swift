import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Calls every hook of the plugin it wraps, whatever that plugin declares in
/// `Plugin.implementedHooks`: for a test that a plugin's declaration leaves out no hook
/// it implements. Run the same calls with the plugin alone and wrapped; what it did must be the
/// same both ways.
///
/// ```swift
/// let alone = try await run(with: SigningPlugin())
/// let everyHook = try await run(with: EveryHookPlugin(SigningPlugin()))
/// #expect(alone == everyHook)
/// ```
///
/// Use calls that reach every hook: a retry (`willRetry`) and a refreshed credential
/// (`willRefreshCredential`) besides the plain path.
public struct EveryHookPlugin: Plugin {
    /// The plugin whose hooks are all called.
    public let wrapped: any Plugin

    /// Wraps `plugin`.
    public init(_ plugin: any Plugin) {
        wrapped = plugin
    }

    public func prepare(_ request: consuming URLRequest, context: RequestContext) async throws -> URLRequest {
        try await wrapped.prepare(request, context: context)
    }

    public func willSend(_ request: URLRequest, context: RequestContext) async {
        await wrapped.willSend(request, context: context)
    }

    public func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {
        await wrapped.didReceive(result, context: context)
    }

    public func willRetry(
        _ request: URLRequest, after error: CourierError, delay: Duration, context: RequestContext
    ) async {
        await wrapped.willRetry(request, after: error, delay: delay, context: context)
    }

    public func willRefreshCredential(_ request: URLRequest, context: RequestContext) async {
        await wrapped.willRefreshCredential(request, context: context)
    }

    public func process(
        _ result: Result<Response, CourierError>, context: RequestContext
    ) async -> Result<Response, CourierError> {
        await wrapped.process(result, context: context)
    }

    public func didFinish(
        _ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext
    ) async {
        await wrapped.didFinish(result, metrics: metrics, context: context)
    }
}
