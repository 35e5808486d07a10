import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How retries, credential refresh and cancellation compose for one call: a pure state machine.
///
/// The provider's driver (`Provider.performStages`) feeds it events (an attempt ended, a refresh
/// ended, a wait ended, the task was cancelled) and does what each returned ``Action`` says. It
/// runs no task and reads no clock, so every combination is specified and tested as a table
/// (`CallStateMachineTests`). The rules:
///
/// | Situation | What happens |
/// |---|---|
/// | attempt succeeds | finish with the response |
/// | signed attempt refused (`Authenticator.requiresRefresh`), no refresh yet | refresh, then send again with the same attempt number |
/// | refused again after a refresh | treated as any failure: the retry policy decides |
/// | refresh fails | finish with `.authentication(.refreshFailed(cause))` (or the refresh's own `AuthenticationFailure`) |
/// | attempt fails, policy says retry | `willRetry` for this attempt, wait, send attempt + 1 |
/// | attempt fails, policy says stop, never retried | finish with that error |
/// | attempt fails with a retryable error after `maxAttempts` | finish with `.retryLimitReached(attempts:lastError:)` |
/// | attempt fails with an error the policy does not retry, after retries | finish with that error |
/// | nothing could be sent (signing, final-request validation) | finish with that error, no retry |
/// | cancelled at any point | finish with `.cancelled` |
/// | the attempt's deadline (`timeout`) passes | the attempt failed with `.timedOut`: the policy decides |
///
/// A refresh is never counted as an attempt: attempt numbers (the policy's, `willRetry`'s and the
/// request context's) count sends that the retry policy allowed. The call deadline
/// (`callTimeout`) is outside the machine: it answers the caller whatever state the call is in.
/// `Product` is what a sent attempt answers (the provider's `CallAnswer`); the machine only
/// passes it on.
struct CallStateMachine<Product: Sendable> {
    /// What the driver does next.
    enum Action {
        /// Sign and send attempt `attempt` (from 1).
        case send(attempt: Int)
        /// Refresh the credential the last attempt was refused with.
        case refresh
        /// Tell plugins `attempt` failed with `error` and will be retried, then wait `delay`.
        case wait(Duration, attempt: Int, error: CourierError)
        /// End the call. `report`: plugins' `didReceive` has not seen this result yet.
        case finish(Result<Product, CourierError>, report: Bool)
        /// The event came after the call finished; nothing to do.
        case none
    }

    enum State: Equatable {
        case idle
        case sending(attempt: Int)
        case refreshing(attempt: Int)
        case waiting(attempt: Int)
        case finished
    }

    private(set) var state = State.idle
    /// Whether the credential was refreshed for this call (at most once).
    private(set) var refreshed = false
    /// Requests handed to the transport or stub, refreshed re-sends included.
    private(set) var sends = 0

    mutating func start() -> Action {
        guard state == .idle else { return .none }
        return send(attempt: 1)
    }

    /// The attempt could not be sent (signing failed, the final request is invalid).
    mutating func notSent(_ error: CourierError) -> Action {
        guard case .sending = state else { return .none }
        return finish(.failure(error), report: error.isCancellation)
    }

    /// The attempt ended with `result` (already reported to `didReceive`). `credentialRefused`:
    /// it was signed and the authenticator says its response refused the credential. `method`
    /// (the request's) is read only when `policy` (the call's) is asked. The machine does not keep
    /// the policy (issue 29: a copy retains its three sets, and the call's plan holds it already).
    mutating func attemptEnded(
        _ result: Result<Product, CourierError>, credentialRefused: Bool,
        method: @autoclosure () -> HTTPMethod, policy: RetryPolicy, now: @autoclosure () -> Date = Date()
    ) -> Action {
        guard case .sending(let attempt) = state else { return .none }
        if case .failure(let error) = result, error.isCancellation {
            return finish(.failure(.cancelled), report: false)
        }
        if credentialRefused, !refreshed {
            refreshed = true
            state = .refreshing(attempt: attempt)
            return .refresh
        }
        guard case .failure(let error) = result else { return finish(result, report: false) }
        switch policy.decision(after: error, method: method(), attempt: attempt, now: now()) {
        case .retry(let delay):
            state = .waiting(attempt: attempt)
            return .wait(delay, attempt: attempt, error: error)
        case .doNotRetry:
            let limitReached = attempt > 1 && attempt >= policy.maxAttempts && policy.isRetryable(error)
            let final = limitReached ? CourierError.retryLimitReached(attempts: attempt, lastError: error) : error
            return finish(.failure(final), report: false)
        }
    }

    /// The refresh ended: `nil` on success, or its error.
    mutating func refreshEnded(_ error: CourierError?) -> Action {
        guard case .refreshing(let attempt) = state else { return .none }
        guard let error else { return send(attempt: attempt) }
        if error.isCancellation { return finish(.failure(.cancelled), report: true) }
        if case .authentication = error { return finish(.failure(error), report: false) }
        return finish(.failure(.authentication(.refreshFailed(error))), report: false)
    }

    /// The wait before the next attempt is over.
    mutating func waitEnded() -> Action {
        guard case .waiting(let attempt) = state else { return .none }
        return send(attempt: attempt + 1)
    }

    /// The calling task was cancelled. While an attempt is in flight the driver reports its result
    /// instead (the transport answers a cancelled transfer at once).
    mutating func cancelled() -> Action {
        guard state != .finished else { return .none }
        return finish(.failure(.cancelled), report: true)
    }

    private mutating func send(attempt: Int) -> Action {
        sends += 1
        state = .sending(attempt: attempt)
        return .send(attempt: attempt)
    }

    private mutating func finish(_ result: Result<Product, CourierError>, report: Bool) -> Action {
        state = .finished
        return .finish(result, report: report)
    }
}
