import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One call's settings, resolved once from the target and the provider when the call starts,
/// and carried by every stage of the pipeline: no stage reads `target.x ?? provider.x` again.
///
/// Its fields are what the stages need and nothing a stage computes. A class: each stage's async
/// frame holds one reference instead of a copy of every setting (as a struct it cost five more
/// mallocs per stubbed request, in the frames' slabs). A call whose target overrides none of the
/// provider's settings, with nothing of its own (``Mode/buffered``, no headers), shares the
/// provider's plan (issue 29: made once, not once per call, with a copy of every setting and
/// their reference counts touched by every call).
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

    // A setting added here that a target may override must also be in `plan(_:mode:headers:)`'s
    // check for the shared plan, or a target overriding it would get the provider's value.
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
        mode: Mode, headers: [String: String], limits: Limits, attemptTimeout: Duration?, callTimeout: Duration?,
        retryPolicy: RetryPolicy, deduplication: Deduplication, errorBody: ErrorBody?
    ) {
        self.mode = mode
        self.headers = headers
        self.limits = limits
        self.attemptTimeout = attemptTimeout
        self.callTimeout = callTimeout
        self.retryPolicy = retryPolicy
        self.deduplication = deduplication
        self.errorBody = errorBody
    }

    /// This plan with `fields` among the credential headers a redirect to another origin does
    /// not carry and the HTTP cache treats as personal (the fields an authenticator signed
    /// with); itself when they are there already.
    func withCredentialFields(_ fields: Set<String>) -> CallPlan {
        // Every signed attempt asks (issue 29): the usual answer, `Authorization`, is found by
        // its hash; names are compared without case in ASCII, never through Foundation's
        // `caseInsensitiveCompare` (an `NSString` bridge, ~68,000 instructions a request here).
        let known = limits.credentialHeaders
        func isKnown(_ field: String) -> Bool {
            known.contains(field) || known.contains { ASCII.equalIgnoringCase($0, field) }
        }
        guard !fields.allSatisfy(isKnown) else { return self }
        let missing = fields.filter { !isKnown($0) }
        var limits = limits
        limits.credentialHeaders.formUnion(missing)
        return CallPlan(
            mode: mode, headers: headers, limits: limits, attemptTimeout: attemptTimeout, callTimeout: callTimeout,
            retryPolicy: retryPolicy, deduplication: deduplication, errorBody: errorBody)
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
    /// Resolves `target`'s settings against this provider's, once per call: the provider's own
    /// plan (``sharedPlan``) when the target overrides none of them and the call adds nothing.
    nonisolated func plan(_ target: Target, mode: CallPlan.Mode, headers: [String: String] = [:]) -> CallPlan {
        // Each override is asked for and dropped at once (a target that overrides one asks again
        // below): held together, the six optionals cost ≈ 390 instructions to copy and destroy.
        if case .buffered = mode, headers.isEmpty, target.limits == nil, target.timeout == nil,
            target.callTimeout == nil, target.retryPolicy == nil, target.deduplication == nil, target.errorBody == nil
        {
            return sharedPlan
        }
        return CallPlan(
            mode: mode, headers: headers, limits: target.limits ?? limits, attemptTimeout: target.timeout ?? timeout,
            callTimeout: target.callTimeout ?? callTimeout, retryPolicy: target.retryPolicy ?? retryPolicy,
            deduplication: target.deduplication ?? deduplication, errorBody: target.errorBody ?? errorBody)
    }

    /// The plan of a buffered call whose target overrides none of the provider's settings.
    static func makeSharedPlan(
        limits: Limits, timeout: Duration?, callTimeout: Duration?, retryPolicy: RetryPolicy,
        deduplication: Deduplication, errorBody: ErrorBody?
    ) -> CallPlan {
        CallPlan(
            mode: .buffered, headers: [:], limits: limits, attemptTimeout: timeout, callTimeout: callTimeout,
            retryPolicy: retryPolicy, deduplication: deduplication, errorBody: errorBody)
    }
}
