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
/// 5. `process`, in plugin order (each sees the previous one's output);
/// 6. `didFinish`, once per call.
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
/// ## One spelling per hook
/// Every hook receives a ``RequestContext``: the call's ``RequestContext/id`` (the same in every
/// hook of one call), its ``RequestContext/target`` and its attempt number. Moya's spelling with
/// `target:` (`willSend(_:target:)`, …) does not exist: a plugin that declares a hook spelled that
/// way fails to compile with a message that names the context form, and a call to it is an error
/// whose fix-it renames it. (Swift would otherwise accept such a method as an unrelated one that is
/// never called; ``NoTarget`` explains how the compiler is made to refuse it.)
public protocol Plugin: Sendable {
    /// The hooks this plugin implements; a provider calls only these. Default: ``PluginHooks/all``,
    /// which is right for every plugin. Declaring fewer saves the calls to the empty defaults (each
    /// an async call through this protocol, a few tenths of a microsecond per request), but a hook
    /// left out is never called, even if the plugin implements it (a subclass that adds a hook
    /// adds it here too). Read once, when the provider is made; `nonisolated` in an actor or a
    /// `@MainActor` class. The built-in plugins declare theirs.
    var implementedHooks: PluginHooks { get }

    /// Changes the request before it is sent (add headers, sign it). Default: returns it unchanged.
    ///
    /// The request is `consuming`: the provider keeps no reference to it, so an implementation
    /// declared `consuming` too changes it in place. One declared without it still satisfies
    /// this requirement, but Foundation then copies the request on its first change.
    /// - Parameters:
    ///   - request: The request so far.
    ///   - context: The call (``RequestContext/attempt`` is `0`: nothing was sent yet).
    /// - Returns: The request to send.
    /// - Throws: Any error to stop the request; it reaches `process` and the caller as a
    ///   ``CourierError``.
    func prepare(_ request: consuming URLRequest, context: RequestContext) async throws -> URLRequest

    /// Called just before the request goes to the transport or stub, once per attempt.
    /// Default: nothing.
    /// - Parameters:
    ///   - request: The final request.
    ///   - context: The call and its attempt.
    func willSend(_ request: URLRequest, context: RequestContext) async

    /// Called with the result after validation, before `process`, once per attempt.
    /// Default: nothing.
    /// - Parameters:
    ///   - result: The response, or the error.
    ///   - context: The call and its attempt.
    func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async

    /// Called when a failed attempt will be sent again (``RetryPolicy``), before the wait.
    /// Default: nothing.
    /// - Parameters:
    ///   - request: The request that failed.
    ///   - error: How it failed.
    ///   - delay: How long the provider waits before the next attempt.
    ///   - context: The call; ``RequestContext/attempt`` is the attempt that failed, from 1.
    func willRetry(_ request: URLRequest, after error: CourierError, delay: Duration, context: RequestContext) async

    /// Called when the server refused the credential and the provider's ``Authentication`` is
    /// about to refresh it; the request is then sent again (same attempt number). Default: nothing.
    /// - Parameters:
    ///   - request: The request whose credential was refused.
    ///   - context: The call.
    func willRefreshCredential(_ request: URLRequest, context: RequestContext) async

    /// Transforms the result before the caller sees it, once per call. Default: returns it
    /// unchanged.
    /// - Parameters:
    ///   - result: The result so far.
    ///   - context: The call.
    /// - Returns: The result to pass on.
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

    // MARK: Moya's spelling, refused at compile time

    /// What a hook spelled with `target:` would take: ``NoTarget`` for every plugin that compiles.
    /// Not a hook; see ``NoTarget``.
    associatedtype TargetSpelling = NoTarget

    /// Not a hook: Moya's spelling of ``prepare(_:context:)``, which a plugin cannot declare
    /// (see ``NoTarget``). Its parameter has no values, so it can never be called.
    func prepare(_ request: URLRequest, target: TargetSpelling) async throws -> URLRequest

    /// Not a hook: Moya's spelling of ``willSend(_:context:)``, which a plugin cannot declare
    /// (see ``NoTarget``). Its parameter has no values, so it can never be called.
    func willSend(_ request: URLRequest, target: TargetSpelling) async

    /// Not a hook: Moya's spelling of ``didReceive(_:context:)``, which a plugin cannot declare
    /// (see ``NoTarget``). Its parameter has no values, so it can never be called.
    func didReceive(_ result: Result<Response, CourierError>, target: TargetSpelling) async

    /// Not a hook: the earlier spelling of ``willRetry(_:after:delay:context:)``, which a plugin
    /// cannot declare (see ``NoTarget``). Its parameter has no values, so it can never be
    /// called.
    func willRetry(
        _ request: URLRequest, after error: CourierError, attempt: Int, delay: Duration, target: TargetSpelling
    ) async

    /// Not a hook: ``willRetry(_:after:delay:context:)`` with the `attempt:` of the earlier
    /// spelling, which a plugin cannot declare (see ``NoTarget``).
    func willRetry(
        _ request: URLRequest, after error: CourierError, attempt: Int, delay: Duration, context: TargetSpelling
    ) async

    /// Not a hook: Moya's spelling of ``process(_:context:)``, which a plugin cannot declare
    /// (see ``NoTarget``). Its parameter has no values, so it can never be called.
    func process(
        _ result: Result<Response, CourierError>, target: TargetSpelling
    ) async
        -> Result<Response, CourierError>

    /// Holds for every plugin whose ``TargetSpelling`` is ``NoTarget``, and only for those: the
    /// check that refuses a hook spelled with `target:`. Not for plugins to implement.
    static var hooksTakeARequestContext: NoTarget.Type { get }
}

/// The parameter type of Moya's `target:` hook spellings in ``Plugin``: it has no values, so those
/// methods can never be called, and only a plugin that declares none of them compiles.
///
/// Swift accepts a method in a conforming type that matches no requirement as a method of its own:
/// a Moya plugin's `func willSend(_ request: URLRequest, target: any TargetType)` would compile and
/// never be called. So ``Plugin`` keeps each `target:` spelling as a requirement whose parameter is
/// ``Plugin/TargetSpelling``. A plugin that declares one makes Swift infer `TargetSpelling` as
/// `any TargetType` (or whatever it wrote there), and ``Plugin/hooksTakeARequestContext`` then
/// has only an unavailable implementation, whose message says what to write instead.
public enum NoTarget: Sendable {}

extension Plugin {
    public var implementedHooks: PluginHooks { .all }

    public func prepare(_ request: consuming URLRequest, context: RequestContext) async throws -> URLRequest {
        request
    }

    public func willSend(_ request: URLRequest, context: RequestContext) async {}

    public func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {}

    public func willRetry(
        _ request: URLRequest, after error: CourierError, delay: Duration, context: RequestContext
    ) async {}

    public func willRefreshCredential(_ request: URLRequest, context: RequestContext) async {}

    public func process(
        _ result: Result<Response, CourierError>, context: RequestContext
    ) async
        -> Result<Response, CourierError>
    {
        result
    }

    public func didFinish(
        _ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext
    ) async {}
}

// The `target:` requirements' witnesses: never called (their parameter has no values).
extension Plugin {
    public func prepare(_ request: URLRequest, target: TargetSpelling) async throws -> URLRequest { request }

    public func willSend(_ request: URLRequest, target: TargetSpelling) async {}

    public func didReceive(_ result: Result<Response, CourierError>, target: TargetSpelling) async {}

    public func willRetry(
        _ request: URLRequest, after error: CourierError, attempt: Int, delay: Duration, target: TargetSpelling
    ) async {}

    public func willRetry(
        _ request: URLRequest, after error: CourierError, attempt: Int, delay: Duration, context: TargetSpelling
    ) async {}

    public func process(
        _ result: Result<Response, CourierError>, target: TargetSpelling
    ) async
        -> Result<Response, CourierError>
    {
        result
    }

    @available(
        *, unavailable,
        message: """
            Courier's plugin hooks take a RequestContext, not a target (read context.target): write \
            prepare(_:context:), willSend(_:context:), didReceive(_:context:), \
            willRetry(_:after:delay:context:) (the attempt is context.attempt) and process(_:context:); \
            a hook spelled with target: would never be called
            """
    )
    public static var hooksTakeARequestContext: NoTarget.Type { NoTarget.self }
}

extension Plugin where TargetSpelling == NoTarget {
    public static var hooksTakeARequestContext: NoTarget.Type { NoTarget.self }
}

// Calls in Moya's spelling (a composite plugin forwarding to the plugins it wraps, a test calling
// a plugin directly) are errors with a fix-it, instead of calls that do nothing.
extension Plugin {
    /// Renamed ``prepare(_:context:)``.
    @available(*, unavailable, renamed: "prepare(_:context:)")
    public func prepare<T: TargetType>(_ request: URLRequest, target: T) async throws -> URLRequest { request }

    /// Renamed ``willSend(_:context:)``.
    @available(*, unavailable, renamed: "willSend(_:context:)")
    public func willSend<T: TargetType>(_ request: URLRequest, target: T) async {}

    /// Renamed ``didReceive(_:context:)``.
    @available(*, unavailable, renamed: "didReceive(_:context:)")
    public func didReceive<T: TargetType>(_ result: Result<Response, CourierError>, target: T) async {}

    /// Renamed ``willRetry(_:after:delay:context:)``; the attempt is ``RequestContext/attempt``.
    @available(*, unavailable, renamed: "willRetry(_:after:delay:context:)")
    public func willRetry<T: TargetType>(
        _ request: URLRequest, after error: CourierError, attempt: Int, delay: Duration, target: T
    ) async {}

    /// Renamed ``process(_:context:)``.
    @available(*, unavailable, renamed: "process(_:context:)")
    public func process<T: TargetType>(
        _ result: Result<Response, CourierError>, target: T
    ) async
        -> Result<Response, CourierError>
    {
        result
    }
}
