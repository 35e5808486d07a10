import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The specification of how retries, credential refresh and cancellation compose: each scenario
/// is a sequence of events and the action the state machine answers each with. No tasks, no
/// clocks. (`CallStateMachine`'s documentation has the same rules as a table.)
@Suite struct CallStateMachineTests {
    /// The provider's machine carries its `CallAnswer`; these tables carry plain responses.
    typealias Machine = CallStateMachine<Response>

    enum Event: CustomStringConvertible, Sendable {
        case start
        case ok
        case status(Int)
        case refused(Int)  // a signed attempt whose response refused the credential
        case transportError(URLError.Code)
        case timedOut
        case notSent
        case refreshed
        case refreshFailed(CourierError)
        case waited
        case cancel
        case cancelledAttempt

        var description: String {
            switch self {
            case .start: "start"
            case .ok: "200"
            case .status(let code): "\(code)"
            case .refused(let code): "refused \(code)"
            case .transportError(let code): "URLError \(code.rawValue)"
            case .timedOut: "timed out"
            case .notSent: "not sent"
            case .refreshed: "refreshed"
            case .refreshFailed: "refresh failed"
            case .waited: "waited"
            case .cancel: "cancel"
            case .cancelledAttempt: "attempt cancelled"
            }
        }
    }

    struct Scenario: CustomTestStringConvertible, Sendable {
        let name: String
        let policy: RetryPolicy
        let method: HTTPMethod
        /// (event, expected action) pairs, in order.
        let steps: [(String, String)]
        var testDescription: String { name }

        init(_ name: String, policy: RetryPolicy = .disabled, method: HTTPMethod = .get, _ steps: [(Event, String)]) {
            self.name = name
            self.policy = policy
            self.method = method
            self.steps = steps.map { ($0.0.description, $0.1) }
            self.events = steps.map(\.0)
        }

        let events: [Event]
    }

    static let three = RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), jitter: .none)

    static let scenarios: [Scenario] = [
        Scenario("success", [(.start, "send 1"), (.ok, "finish 200")]),
        Scenario("error status, no policy", [(.start, "send 1"), (.status(503), "finish statusCode 503")]),
        Scenario(
            "retry then success", policy: three,
            [(.start, "send 1"), (.status(503), "wait 1s after 1"), (.waited, "send 2"), (.ok, "finish 200")]),
        Scenario(
            "retries exhausted", policy: three,
            [
                (.start, "send 1"), (.status(503), "wait 1s after 1"), (.waited, "send 2"),
                (.status(503), "wait 2s after 2"), (.waited, "send 3"),
                (.status(503), "finish retryLimitReached 3 statusCode 503"),
            ]),
        Scenario(
            "a non-retryable failure after a retry is itself", policy: three,
            [
                (.start, "send 1"), (.status(503), "wait 1s after 1"), (.waited, "send 2"),
                (.status(404), "finish statusCode 404"),
            ]),
        Scenario(
            "POST is not retried by default", policy: three, method: .post,
            [(.start, "send 1"), (.status(503), "finish statusCode 503")]),
        Scenario(
            "transport error retried", policy: three,
            [
                (.start, "send 1"), (.transportError(.timedOut), "wait 1s after 1"), (.waited, "send 2"),
                (.ok, "finish 200"),
            ]),
        Scenario(
            "attempt deadline is a retryable failure", policy: three,
            [(.start, "send 1"), (.timedOut, "wait 1s after 1"), (.waited, "send 2"), (.ok, "finish 200")]),
        // Defect 1: a refresh is not a retry.
        Scenario(
            "refresh without a policy, then an error status",
            [
                (.start, "send 1"), (.refused(401), "refresh"), (.refreshed, "send 1"),
                (.status(500), "finish statusCode 500"),
            ]),
        Scenario(
            "refresh then success",
            [(.start, "send 1"), (.refused(401), "refresh"), (.refreshed, "send 1"), (.ok, "finish 200")]),
        Scenario(
            "refresh then retries keep the policy's attempt numbers", policy: three,
            [
                (.start, "send 1"), (.refused(401), "refresh"), (.refreshed, "send 1"),
                (.status(503), "wait 1s after 1"), (.waited, "send 2"),
                (.status(503), "wait 2s after 2"), (.waited, "send 3"),
                (.status(503), "finish retryLimitReached 3 statusCode 503"),
            ]),
        Scenario(
            "refused again after a refresh: no second refresh", policy: three,
            [
                (.start, "send 1"), (.refused(401), "refresh"), (.refreshed, "send 1"),
                (.refused(401), "finish statusCode 401"),
            ]),
        Scenario(
            "a refresh after a retry", policy: three,
            [
                (.start, "send 1"), (.status(503), "wait 1s after 1"), (.waited, "send 2"),
                (.refused(401), "refresh"), (.refreshed, "send 2"), (.ok, "finish 200"),
            ]),
        // Defect 4: refresh failures are always authentication errors.
        Scenario(
            "refresh fails with a status error",
            [
                (.start, "send 1"), (.refused(401), "refresh"),
                (
                    .refreshFailed(.statusCode(Response(statusCode: 400, data: Data()))),
                    "finish authentication refreshFailed"
                ),
            ]),
        Scenario(
            "refresh limit reached stays itself",
            [
                (.start, "send 1"), (.refused(401), "refresh"),
                (
                    .refreshFailed(.authentication(.refreshLimitReached(refreshes: 2, window: .seconds(1)))),
                    "finish authentication refreshLimitReached"
                ),
            ]),
        Scenario(
            "refresh cancelled",
            [
                (.start, "send 1"), (.refused(401), "refresh"),
                (.refreshFailed(.cancelled), "finish cancelled, reported"),
            ]
        ),
        Scenario("not sent", policy: three, [(.start, "send 1"), (.notSent, "finish requestMapping")]),
        Scenario("cancelled before sending", [(.start, "send 1"), (.cancel, "finish cancelled, reported")]),
        Scenario("attempt cancelled", policy: three, [(.start, "send 1"), (.cancelledAttempt, "finish cancelled")]),
        Scenario(
            "cancelled while waiting", policy: three,
            [(.start, "send 1"), (.status(503), "wait 1s after 1"), (.cancel, "finish cancelled, reported")]),
        Scenario(
            "events after the end change nothing",
            [
                (.start, "send 1"), (.ok, "finish 200"), (.cancel, "none"), (.waited, "none"), (.refreshed, "none"),
                (.ok, "none"),
            ]),
        Scenario(
            "wrong events are ignored", [(.waited, "none"), (.refreshed, "none"), (.start, "send 1"), (.start, "none")]),
    ]

    @Test(arguments: scenarios) func scenario(_ scenario: Scenario) {
        var machine = Machine()
        let request = URLRequest(url: URL(string: "https://api.example.com/a")!)
        let method = scenario.method
        func ended(_ result: Result<Response, CourierError>, refused: Bool = false) -> Machine.Action {
            machine.attemptEnded(result, credentialRefused: refused, method: method, policy: scenario.policy)
        }
        for (event, (name, expected)) in zip(scenario.events, scenario.steps) {
            let action: Machine.Action =
                switch event {
                case .start: machine.start()
                case .ok: ended(.success(Response(statusCode: 200, data: Data())))
                case .status(let code):
                    ended(.failure(.statusCode(Response(statusCode: code, data: Data(), request: request))))
                case .refused(let code):
                    ended(
                        .failure(.statusCode(Response(statusCode: code, data: Data(), request: request))), refused: true
                    )
                case .transportError(let code): ended(.failure(.underlying(URLError(code), nil)))
                case .timedOut: ended(.failure(.timedOut(.seconds(5))))
                case .notSent: machine.notSent(.requestMapping("bad"))
                case .refreshed: machine.refreshEnded(nil)
                case .refreshFailed(let error): machine.refreshEnded(error)
                case .waited: machine.waitEnded()
                case .cancel: machine.cancelled()
                case .cancelledAttempt: ended(.failure(.cancelled))
                }
            #expect(Self.describe(action) == expected, "after \(name)")
        }
    }

    @Test func sendsCountRefreshedResends() {
        var machine = Machine()
        _ = machine.start()
        let refused = Result<Response, CourierError>.failure(.statusCode(Response(statusCode: 401, data: Data())))
        _ = machine.attemptEnded(refused, credentialRefused: true, method: .get, policy: Self.three)
        _ = machine.refreshEnded(nil)
        #expect(machine.sends == 2)
        #expect(machine.refreshed)
        #expect(machine.state == .sending(attempt: 1))
    }

    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .send(let attempt): "send \(attempt)"
        case .refresh: "refresh"
        case .wait(let delay, let attempt, _): "wait \(delay.components.seconds)s after \(attempt)"
        case .finish(let result, let report): describe(result) + (report ? ", reported" : "")
        case .none: "none"
        }
    }

    static func describe(_ result: Result<Response, CourierError>) -> String {
        switch result {
        case .success(let response): "finish \(response.statusCode)"
        case .failure(let error): "finish " + describe(error)
        }
    }

    static func describe(_ error: CourierError) -> String {
        switch error {
        case .statusCode(let response): "statusCode \(response.statusCode)"
        case .retryLimitReached(let attempts, let last): "retryLimitReached \(attempts) \(describe(last))"
        case .authentication(.refreshFailed): "authentication refreshFailed"
        case .authentication(.refreshLimitReached): "authentication refreshLimitReached"
        case .cancelled: "cancelled"
        case .requestMapping: "requestMapping"
        default: "\(error)"
        }
    }
}
