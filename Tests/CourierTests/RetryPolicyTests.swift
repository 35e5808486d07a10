import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct RetryPolicyTests {
    private let get = URLRequest(url: URL(string: "https://api.example.com/a")!)
    private var post: URLRequest {
        var request = get
        request.httpMethod = "POST"
        return request
    }
    private let fixed = RetryPolicy(
        maxAttempts: 4, baseDelay: .seconds(1), multiplier: 2, maxDelay: .seconds(3), jitter: .none)

    private func status(_ code: Int, headers: [String: String] = [:]) -> CourierError {
        let http = HTTPURLResponse(url: get.url!, statusCode: code, httpVersion: "HTTP/1.1", headerFields: headers)
        return .statusCode(Response(statusCode: code, data: Data(), request: get, response: http))
    }

    @Test func exponentialDelaysCappedAtTheMaximum() {
        #expect(fixed.decision(after: status(503), request: get, attempt: 1) == .retry(after: .seconds(1)))
        #expect(fixed.decision(after: status(503), request: get, attempt: 2) == .retry(after: .seconds(2)))
        #expect(fixed.decision(after: status(503), request: get, attempt: 3) == .retry(after: .seconds(3)))
        #expect(fixed.decision(after: status(503), request: get, attempt: 4) == .doNotRetry)
    }

    @Test func fullJitterStaysWithinTheComputedDelay() {
        var policy = fixed
        policy.jitter = .full
        for _ in 0..<200 {
            guard case .retry(let delay) = policy.decision(after: status(503), request: get, attempt: 2) else {
                Issue.record("expected a retry")
                return
            }
            #expect(delay >= .zero && delay <= .seconds(2))
        }
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func defaultRetryableStatuses(code: Int) {
        #expect(RetryPolicy.default.isRetryable(status(code)))
    }

    @Test(arguments: [400, 401, 403, 404, 409, 422, 501])
    func otherStatusesAreNotRetried(code: Int) {
        #expect(fixed.decision(after: status(code), request: get, attempt: 1) == .doNotRetry)
    }

    @Test func transportErrors() {
        for code: URLError.Code in [.timedOut, .networkConnectionLost, .cannotConnectToHost, .notConnectedToInternet] {
            #expect(fixed.isRetryable(.underlying(URLError(code), nil)), "\(code)")
        }
        #expect(fixed.isRetryable(.timedOut(.seconds(1))))
        #expect(!fixed.isRetryable(.underlying(URLError(.badURL), nil)))
        #expect(!fixed.isRetryable(.cancelled))
        #expect(!fixed.isRetryable(.requestMapping("x")))
    }

    @Test func nonIdempotentMethodsAreNotRetriedByDefault() {
        #expect(fixed.decision(after: status(503), request: post, attempt: 1) == .doNotRetry)
        var all = fixed
        all.methods = nil
        #expect(all.decision(after: status(503), request: post, attempt: 1) == .retry(after: .seconds(1)))
    }

    @Test func retryAfterSecondsIsHonouredAndCapped() {
        #expect(
            fixed.decision(after: status(429, headers: ["Retry-After": "2"]), request: get, attempt: 1)
                == .retry(after: .seconds(2)))
        #expect(
            fixed.decision(after: status(503, headers: ["Retry-After": "120"]), request: get, attempt: 1)
                == .retry(after: .seconds(3)))
    }

    @Test func retryAfterHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)  // Tue, 14 Nov 2023 22:13:20 GMT
        let inTwo = status(503, headers: ["Retry-After": "Tue, 14 Nov 2023 22:13:22 GMT"])
        #expect(fixed.decision(after: inTwo, request: get, attempt: 1, now: now) == .retry(after: .seconds(2)))
        let past = status(503, headers: ["Retry-After": "Tue, 14 Nov 2023 22:00:00 GMT"])
        #expect(fixed.decision(after: past, request: get, attempt: 1, now: now) == .retry(after: .zero))
        let garbage = status(503, headers: ["Retry-After": "soon"])
        #expect(fixed.decision(after: garbage, request: get, attempt: 1, now: now) == .retry(after: .seconds(1)))
    }

    @Test func noneNeverRetries() {
        #expect(RetryPolicy.disabled.decision(after: status(503), request: get, attempt: 1) == .doNotRetry)
    }
}
