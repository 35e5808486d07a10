import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One call's settings, resolved once from the target and the provider when the call starts,
/// and carried by every stage of the pipeline: no stage reads `target.x ?? provider.x` again.
///
/// Its fields are what the stages need and nothing a stage computes. A class, made once per
/// call: each stage's async frame holds one reference instead of a copy of every setting (as a
/// struct it cost five more mallocs per stubbed request, in the frames' slabs).
///
/// Not generic (issue 29): the stages take the call's `Target` beside it. Nested in the generic
/// `Provider`, it was a generic class, whose metadata the runtime looked up in its cache for every
/// call (about 330 instructions, and cache lines cold after each network wait).
final class CallPlan: Sendable {
    /// How the response comes back to the caller.
    enum Mode: Sendable {
        /// Whole: in memory, or in the target's download destination. The only mode whose
        /// exchanges may be shared with identical requests in flight (``Deduplication``).
        case buffered
        /// Whole, with progress events as bytes move (``Provider/requestWithProgress(_:)``).
        case progress(ProgressReporter)
        /// The head, then the body as it arrives (``Provider/stream(_:idleTimeout:totalTimeout:)``).
        /// `idleTimeout` also bounds the wait for the start of a refused status's body.
        case stream(idleTimeout: Duration?)
    }

    /// What is requested, as plugins and transports see it (the wrapped target of a
    /// ``MultiTarget``, which forwards every setting to it): boxed once per call for the call's
    /// context and its ``Transfer`` (issue 29: one existential box, not one for each, for a target
    /// too large to be stored inline).
    let pluginTarget: any TargetType
    let mode: Mode
    /// Headers the call itself adds before plugins' `prepare` (an event source's
    /// `Last-Event-ID`); empty for every other call.
    let headers: [String: String]
    /// ``TargetType/limits``, or the provider's.
    let limits: Limits
    /// Each attempt's deadline: ``TargetType/timeout``, or the provider's; `nil` for none.
    let attemptTimeout: Duration?
    /// The whole call's deadline: ``TargetType/callTimeout``, or the provider's; `nil` for none.
    let callTimeout: Duration?
    /// ``TargetType/retryPolicy``, or the provider's.
    let retryPolicy: RetryPolicy
    /// ``TargetType/deduplication``, or the provider's.
    let deduplication: Deduplication
    /// ``TargetType/errorBody``, or the provider's.
    let errorBody: ErrorBody?

    init(
        pluginTarget: any TargetType, mode: Mode, headers: [String: String], limits: Limits, attemptTimeout: Duration?,
        callTimeout: Duration?, retryPolicy: RetryPolicy, deduplication: Deduplication, errorBody: ErrorBody?
    ) {
        self.pluginTarget = pluginTarget
        self.mode = mode
        self.headers = headers
        self.limits = limits
        self.attemptTimeout = attemptTimeout
        self.callTimeout = callTimeout
        self.retryPolicy = retryPolicy
        self.deduplication = deduplication
        self.errorBody = errorBody
    }

    /// The progress reporter, in ``Mode/progress(_:)``.
    var progress: ProgressReporter? {
        if case .progress(let reporter) = mode { return reporter }
        return nil
    }

    /// Whether the response is streamed (``Mode/stream(idleTimeout:)``).
    var isStream: Bool {
        if case .stream = mode { return true }
        return false
    }
}

extension Provider {
    /// Resolves `target`'s settings against this provider's, once per call.
    nonisolated func plan(_ target: Target, mode: CallPlan.Mode, headers: [String: String] = [:]) -> CallPlan {
        CallPlan(
            pluginTarget: target.pluginTarget, mode: mode, headers: headers, limits: target.limits ?? limits,
            attemptTimeout: target.timeout ?? timeout, callTimeout: target.callTimeout ?? callTimeout,
            retryPolicy: target.retryPolicy ?? retryPolicy, deduplication: target.deduplication ?? deduplication,
            errorBody: target.errorBody ?? errorBody)
    }
}
