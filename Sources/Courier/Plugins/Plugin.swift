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
