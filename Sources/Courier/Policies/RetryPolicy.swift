import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// When and how a failed request is sent again.
///
/// ```swift
/// let provider = Provider<API>(retryPolicy: .default)            // 3 attempts, idempotent methods
/// let patient = RetryPolicy(maxAttempts: 5, baseDelay: .seconds(1), maxDelay: .seconds(20))
/// ```
///
/// A failure is retried when the method is allowed (``methods``), the attempt limit is not reached,
/// and the response status is in ``retryableStatusCodes`` or the transport failed with one of
/// ``retryableErrors`` (or the request's deadline passed). The wait before attempt *n + 1* is
/// `baseDelay × multiplier^(n − 1)`, capped at ``maxDelay``, then jittered; a `Retry-After` header
/// (seconds or an HTTP date) replaces it, capped at ``maxDelay`` too. Waits use the provider's
/// clock, and cancelling the request during one ends it at once. When a request was sent more than
/// once and its last attempt failed in a way this policy retries (so the attempt limit is what stopped
/// it), the error is ``CourierError/retryLimitReached(attempts:lastError:)``; any other failure
/// arrives as itself. A credential refresh (``Authentication``) is not an attempt: see
/// <doc:RetriesAndAuthentication> for how the two compose.
public struct RetryPolicy: Sendable, Hashable {
    /// How waits are randomized, so many clients do not retry in step.
    public enum Jitter: Sendable, Hashable {
        /// Exactly the computed delay.
        case none
        /// A random delay between zero and the computed one ("full jitter").
        case full
    }

    /// Attempts in all, the first included. `1` means no retry. Default: 3.
    public var maxAttempts: Int
    /// The wait before the first retry. Default: 0.5 s.
    public var baseDelay: Duration
    /// How much each wait grows. Default: 2.
    public var multiplier: Double
    /// The longest wait, `Retry-After` included. Default: 30 s.
    public var maxDelay: Duration
    /// Default: ``Jitter/full``.
    public var jitter: Jitter
    /// Statuses worth retrying. Default: 408, 429, 500, 502, 503, 504.
    public var retryableStatusCodes: Set<Int>
    /// Transport failures worth retrying. Default: timed out, connection lost, cannot connect,
    /// cannot find host, DNS lookup failed, not connected to the internet.
    public var retryableErrors: Set<URLError.Code>
    /// Methods that may be retried; `nil` means all. Default: the idempotent ones (GET, HEAD,
    /// OPTIONS, PUT, DELETE, TRACE, QUERY).
    public var methods: Set<HTTPMethod>?
    /// Whether a `Retry-After` header sets the wait. Default: `true`.
    public var respectsRetryAfter: Bool

    /// Creates a policy; every parameter has the default documented on its property.
    public init(
        maxAttempts: Int = 3,
        baseDelay: Duration = .milliseconds(500),
        multiplier: Double = 2,
        maxDelay: Duration = .seconds(30),
        jitter: Jitter = .full,
        retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504],
        retryableErrors: Set<URLError.Code> = RetryPolicy.defaultRetryableErrors,
        methods: Set<HTTPMethod>? = [.get, .head, .options, .put, .delete, .trace, .query],
        respectsRetryAfter: Bool = true
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.retryableStatusCodes = retryableStatusCodes
        self.retryableErrors = retryableErrors
        self.methods = methods
        self.respectsRetryAfter = respectsRetryAfter
    }

    /// Never retry (the provider's default).
    public static let disabled = RetryPolicy(maxAttempts: 1)

    /// Renamed ``disabled``: in a target's `var retryPolicy: RetryPolicy?`, `.none` is
    /// `Optional.none`, which means "use the provider's policy", the opposite of what it reads as.
    @available(
        *, unavailable, renamed: "disabled",
        message: "write `.disabled` to never retry, or `nil` to use the provider's policy"
    )
    public static var none: RetryPolicy { disabled }
    /// The defaults: 3 attempts of idempotent requests, 0.5 s then 1 s (jittered), at most 30 s.
    public static let `default` = RetryPolicy()

    /// The transport failures retried by default.
    public static let defaultRetryableErrors: Set<URLError.Code> = [
        .timedOut, .networkConnectionLost, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed,
        .notConnectedToInternet,
    ]

    /// Whether and when to send a request again.
    public enum Decision: Sendable, Hashable {
        /// Send it again after this wait.
        case retry(after: Duration)
        /// Stop and report the failure.
        case doNotRetry
    }

    /// Decides about a failed attempt.
    /// - Parameters:
    ///   - error: How the attempt failed.
    ///   - request: The request that was sent.
    ///   - attempt: Which attempt it was, from 1.
    ///   - now: The current date, for `Retry-After` dates. Default: now.
    /// - Returns: ``Decision/retry(after:)`` or ``Decision/doNotRetry``.
    public func decision(
        after error: CourierError, request: URLRequest, attempt: Int, now: Date = Date()
    ) -> Decision {
        decision(after: error, method: HTTPMethod(rawValue: request.httpMethod ?? "GET"), attempt: attempt, now: now)
    }

    func decision(after error: CourierError, method: HTTPMethod, attempt: Int, now: Date) -> Decision {
        guard attempt < maxAttempts, isRetryable(error) else { return .doNotRetry }
        if let methods, !methods.contains(method) { return .doNotRetry }
        if respectsRetryAfter, let header = error.response?.value(forHTTPHeaderField: "Retry-After"),
            let wait = Self.retryAfter(header, now: now)
        {
            return .retry(after: max(.zero, min(wait, maxDelay)))
        }
        return .retry(after: delay(forRetry: attempt))
    }

    /// Whether the failure is one this policy retries (ignoring attempts and method).
    public func isRetryable(_ error: CourierError) -> Bool {
        switch error {
        case .statusCode(let response), .apiError(_, let response):
            return retryableStatusCodes.contains(response.statusCode)
        case .timedOut:
            return retryableErrors.contains(.timedOut)
        case .underlying(let underlying, _):
            guard let code = (URLErrors.normalize(underlying) as? URLError)?.code else { return false }
            return retryableErrors.contains(code)
        default:
            return false
        }
    }

    /// The wait after attempt `attempt` (from 1): exponential, capped, jittered. Saturating: no
    /// multiplier, delay or attempt number can trap; a negative or non-finite result is zero or the
    /// cap.
    func delay(forRetry attempt: Int) -> Duration {
        let base = Self.seconds(baseDelay)
        let cap = max(0, Self.seconds(maxDelay))
        let growth = multiplier.isFinite ? max(multiplier, 1) : 1
        let exponential = base * pow(growth, Double(max(attempt - 1, 0)))
        var seconds = exponential.isFinite ? min(max(exponential, 0), cap) : cap
        if jitter == .full, seconds > 0 { seconds = Double.random(in: 0...seconds) }
        return Self.duration(seconds: seconds)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// A duration of `seconds`, saturating at about 292 years (`Int64.max` nanoseconds) and at zero.
    static func duration(seconds: Double) -> Duration {
        guard seconds.isFinite, seconds > 0 else { return seconds == .infinity ? .nanoseconds(Int64.max) : .zero }
        let nanoseconds = seconds * 1e9
        guard nanoseconds < 9.2e18 else { return .nanoseconds(Int64.max) }
        return .nanoseconds(Int64(nanoseconds.rounded()))
    }

    /// `Retry-After`: delay-seconds or an HTTP date (RFC 9110 §10.2.3). A date in the past means now.
    static func retryAfter(_ header: String, now: Date) -> Duration? {
        let text = header.trimmingWhitespace()
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // All digits: a number of seconds, however large (saturating).
            return duration(seconds: Double(text) ?? .infinity)
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        return duration(seconds: max(0, date.timeIntervalSince(now)))
    }
}
