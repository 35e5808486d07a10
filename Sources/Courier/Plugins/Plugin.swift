import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Hooks into every request a provider makes, real or stubbed. Every method has a default that
/// does nothing, so a plugin implements only what it needs.
///
/// Order for one request:
/// 1. `prepare`, in plugin order (each sees the previous one's output);
/// 2. `willSend`, in plugin order;
/// 3. the transport or the stub, then validation;
/// 4. `didReceive`, in plugin order;
/// 5. `process`, in plugin order (each sees the previous one's output).
///
/// When the endpoint mapping, the request mapping or a `prepare` fails, nothing is sent:
/// `willSend` and `didReceive` are skipped and the failure still goes through `process`.
///
/// A cancelled request, at whatever stage, reaches `didReceive` and `process` exactly once each
/// with ``CourierError/cancelled`` (`willSend` only if it got that far).
///
/// With retries (``RetryPolicy``) or a credential refresh (``Authentication``), `willSend` and
/// `didReceive` run once per attempt, `willRetry` before each wait, and `process` once at the end.
///
/// With de-duplication (``Deduplication``), hooks run per caller: every caller's request passes
/// `prepare`, `willSend`, `didReceive` and `process` once, while the transport is called once for
/// all of them.
///
/// Plugins receive the target a ``MultiTarget`` wraps, not the wrapper.
///
/// ## Two spellings of each hook
/// Every hook comes in a Moya-style form that receives the target, and a form that receives a
/// ``RequestContext``: the call's ``RequestContext/id`` (the same in every hook of one call), its
/// target and its attempt number. The provider calls the context form; by default it calls the
/// target form, so implement whichever you need. `didFinish` comes only with a context: it runs
/// last, once per call, with the call's ``RequestMetrics``.
public protocol Plugin: Sendable {
    /// Changes the request before it is sent (add headers, sign it). Default: returns it unchanged.
    /// - Parameters:
    ///   - request: The request so far.
    ///   - target: The target being requested.
    /// - Returns: The request to send.
    /// - Throws: Any error to stop the request; it reaches `process` and the caller as a
    ///   ``CourierError``.
    func prepare(_ request: URLRequest, target: any TargetType) async throws -> URLRequest

    /// Called just before the request goes to the transport or stub. Default: nothing.
    /// - Parameters:
    ///   - request: The final request.
    ///   - target: The target being requested.
    func willSend(_ request: URLRequest, target: any TargetType) async

    /// Called with the result after validation, before `process`. Default: nothing.
    /// - Parameters:
    ///   - result: The response, or the error.
    ///   - target: The target being requested.
    func didReceive(_ result: Result<Response, CourierError>, target: any TargetType) async

    /// Called when a failed attempt will be sent again (``RetryPolicy``), before the wait.
    /// Default: nothing.
    /// - Parameters:
    ///   - request: The request that failed.
    ///   - error: How it failed.
    ///   - attempt: Which attempt failed, from 1.
    ///   - delay: How long the provider waits before the next attempt.
    ///   - target: The target being requested.
    func willRetry(
        _ request: URLRequest, after error: CourierError, attempt: Int, delay: Duration, target: any TargetType
    ) async

    /// Transforms the result before the caller sees it. Default: returns it unchanged.
    /// - Parameters:
    ///   - result: The result so far.
    ///   - target: The target being requested.
    /// - Returns: The result to pass on.
    func process(
        _ result: Result<Response, CourierError>, target: any TargetType
    ) async
        -> Result<Response, CourierError>

    /// `prepare`, with the call's context. Default: `prepare(request, target: context.target)`.
    func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest

    /// `willSend`, with the call's context. Default: `willSend(request, target: context.target)`.
    func willSend(_ request: URLRequest, context: RequestContext) async

    /// `didReceive`, with the call's context. Default: `didReceive(result, target: context.target)`.
    func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async

    /// `willRetry`, with the call's context; the attempt that failed is `context.attempt`.
    /// Default: `willRetry(request, after: error, attempt: context.attempt, delay: delay, target: context.target)`.
    func willRetry(_ request: URLRequest, after error: CourierError, delay: Duration, context: RequestContext) async

    /// Called when the server refused the credential and the provider's ``Authentication`` is
    /// about to refresh it; the request is then sent again (same attempt number). Default: nothing.
    /// - Parameters:
    ///   - request: The request whose credential was refused.
    ///   - context: The call.
    func willRefreshCredential(_ request: URLRequest, context: RequestContext) async

    /// `process`, with the call's context. Default: `process(result, target: context.target)`.
    func process(
        _ result: Result<Response, CourierError>, context: RequestContext
    ) async
        -> Result<Response, CourierError>

    /// Called once when the call ends, after every `process`, with its final result (what the
    /// caller gets) and what happened (``RequestMetrics``), for failed calls too. Default: nothing.
    /// - Parameters:
    ///   - result: The final result; a response in it carries `metrics` too.
    ///   - metrics: Attempts, waits, refreshes, and time in mappings and plugins.
    ///   - context: The call.
    func didFinish(_ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext) async
}

extension Plugin {
    public func prepare(_ request: URLRequest, target: any TargetType) async throws -> URLRequest {
        request
    }

    public func willSend(_ request: URLRequest, target: any TargetType) async {}

    public func didReceive(_ result: Result<Response, CourierError>, target: any TargetType) async {}

    public func willRetry(
        _ request: URLRequest, after error: CourierError, attempt: Int, delay: Duration, target: any TargetType
    ) async {}

    public func process(
        _ result: Result<Response, CourierError>, target: any TargetType
    ) async
        -> Result<Response, CourierError>
    {
        result
    }
}

extension Plugin {
    public func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
        try await prepare(request, target: context.target)
    }

    public func willSend(_ request: URLRequest, context: RequestContext) async {
        await willSend(request, target: context.target)
    }

    public func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {
        await didReceive(result, target: context.target)
    }

    public func willRetry(
        _ request: URLRequest, after error: CourierError, delay: Duration, context: RequestContext
    ) async {
        await willRetry(request, after: error, attempt: context.attempt, delay: delay, target: context.target)
    }

    public func process(
        _ result: Result<Response, CourierError>, context: RequestContext
    ) async
        -> Result<Response, CourierError>
    {
        await process(result, target: context.target)
    }

    public func didFinish(
        _ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext
    ) async {}

    public func willRefreshCredential(_ request: URLRequest, context: RequestContext) async {}
}
