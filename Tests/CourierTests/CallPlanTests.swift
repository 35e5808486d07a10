import CourierTesting
import Foundation
import Testing

@testable import Courier

/// A call's settings: the provider's own plan when the target overrides nothing and the call adds
/// nothing (issue 29), and the target's value for each setting it overrides, the provider's for
/// the rest.
@Suite struct CallPlanTests {
    /// A target that overrides the settings it is given, and nothing else.
    struct Overriding: TargetType {
        var limits: Limits?
        var timeout: Duration?
        var callTimeout: Duration?
        var retryPolicy: RetryPolicy?
        var deduplication: Deduplication?
        var errorBody: ErrorBody?
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "items" }
        var method: HTTPMethod { .get }
        var task: HTTPTask { .plain }
        var headers: [String: String] { [:] }
        var sampleData: Data { Data("{}".utf8) }
    }

    static func provider() -> Provider<Overriding> {
        var limits = Limits.default
        limits.maxRedirects = 3
        return Provider(
            stubClosure: Provider.immediatelyStub, timeout: .seconds(30), callTimeout: .seconds(90), limits: limits,
            deduplication: .enabled, retryPolicy: RetryPolicy(maxAttempts: 2), errorBody: nil)
    }

    @Test func aTargetThatOverridesNothingSharesTheProvidersPlan() {
        let provider = Self.provider()
        let plan = provider.plan(Overriding(), mode: .buffered)
        #expect(plan === provider.sharedPlan)
        #expect(provider.plan(Overriding(), mode: .buffered) === plan)
        #expect(plan.limits.maxRedirects == 3)
        #expect(plan.attemptTimeout == .seconds(30))
        #expect(plan.callTimeout == .seconds(90))
        #expect(plan.retryPolicy.maxAttempts == 2)
        #expect(plan.deduplication.applies(to: .get))
        #expect(plan.errorBody == nil)
        #expect(plan.headers.isEmpty)
        #expect(!plan.isStream)
        // Another provider has a plan of its own.
        #expect(Self.provider().sharedPlan !== plan)
    }

    @Test func aCallThatAddsSomethingHasAPlanOfItsOwn() {
        let provider = Self.provider()
        let (_, continuation) = AsyncThrowingStream<ProgressEvent, any Error>.makeStream()
        defer { continuation.finish() }
        let modes: [CallPlan.Mode] = [.stream(idleTimeout: nil), .progress(ProgressReporter(continuation))]
        for mode in modes {
            let plan = provider.plan(Overriding(), mode: mode)
            #expect(plan !== provider.sharedPlan)
            #expect(plan.attemptTimeout == .seconds(30))
            #expect(plan.limits.maxRedirects == 3)
        }
        let withHeaders = provider.plan(Overriding(), mode: .buffered, headers: ["Last-Event-ID": "7"])
        #expect(withHeaders !== provider.sharedPlan)
        #expect(withHeaders.headers == ["Last-Event-ID": "7"])
        #expect(withHeaders.retryPolicy.maxAttempts == 2)
    }

    @Test func eachOverrideIsTheTargetsAndTheRestStayTheProviders() {
        let provider = Self.provider()
        var limits = Limits.default
        limits.maxRedirects = 9
        let error = ErrorBody { _ in nil }
        let targets: [(String, Overriding)] = [
            ("limits", Overriding(limits: limits)), ("timeout", Overriding(timeout: .seconds(5))),
            ("callTimeout", Overriding(callTimeout: .seconds(7))),
            ("retryPolicy", Overriding(retryPolicy: RetryPolicy(maxAttempts: 4))),
            ("deduplication", Overriding(deduplication: .disabled)), ("errorBody", Overriding(errorBody: error)),
        ]
        for (name, target) in targets {
            let plan = provider.plan(target, mode: .buffered)
            #expect(plan !== provider.sharedPlan, "\(name)")
            #expect(plan.limits.maxRedirects == (name == "limits" ? 9 : 3), "\(name)")
            #expect(plan.attemptTimeout == (name == "timeout" ? .seconds(5) : .seconds(30)), "\(name)")
            #expect(plan.callTimeout == (name == "callTimeout" ? .seconds(7) : .seconds(90)), "\(name)")
            #expect(plan.retryPolicy.maxAttempts == (name == "retryPolicy" ? 4 : 2), "\(name)")
            #expect(plan.deduplication.applies(to: .get) == (name != "deduplication"), "\(name)")
            #expect((plan.errorBody != nil) == (name == "errorBody"), "\(name)")
        }
    }

    /// On the shared plan's path, the transport still gets the call's own target: the one a
    /// `MultiTarget` wraps, per call (the plan carries no target).
    @Test func theTransportGetsEachCallsWrappedTargetOnTheSharedPlan() async throws {
        let transport = StubTransport().on({ _ in true }, .status(200))
        let provider = Provider<MultiTarget>(transport: transport)
        let first = Overriding()
        _ = try await provider.request(MultiTarget(first))
        _ = try await provider.request(MultiTarget(Retargeted(path: "other")))
        #expect(provider.plan(MultiTarget(first), mode: .buffered) === provider.sharedPlan)
        let targets = transport.requests.map(\.target)
        #expect(targets.count == 2)
        #expect(targets.first.flatMap { $0 } is Overriding)
        #expect((targets.last.flatMap { $0 } as? Retargeted)?.path == "other")
        #expect(transport.requests.last?.request.url?.path == "/other")
    }

    /// A second target type with nothing overridden.
    struct Retargeted: TargetType {
        var path: String
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var headers: [String: String] { [:] }
        var sampleData: Data { Data() }
    }

    /// Calls sharing the provider's plan run at once, and each gets its own answer and metrics.
    @Test func concurrentCallsSharingThePlanEachGetTheirOwnAnswer() async throws {
        let provider = Provider<Overriding>(stubClosure: Provider.immediatelyStub)
        let ids = try await withThrowingTaskGroup(of: RequestID?.self) { group in
            for _ in 0..<32 { group.addTask { try await provider.request(Overriding()).metrics?.id } }
            var ids: Set<RequestID?> = []
            for try await id in group { ids.insert(id) }
            return ids
        }
        #expect(ids.count == 32)
        #expect(!ids.contains(nil))
    }

    /// The fields an authenticator signs with join the plan's credential headers (issue 29: asked
    /// on every signed attempt, so a name already there, in any case, costs no new plan).
    @Test func signedFieldsJoinTheCredentialHeadersOnlyWhenNew() {
        let plan = Self.provider().plan(Overriding(), mode: .buffered)
        #expect(plan.withCredentialFields([]) === plan)
        #expect(plan.withCredentialFields(["Authorization"]) === plan)
        #expect(plan.withCredentialFields(["authorization", "X-API-KEY"]) === plan)
        let widened = plan.withCredentialFields(["Authorization", "X-MyApp-Session"])
        #expect(widened !== plan)
        #expect(widened.limits.credentialHeaders == plan.limits.credentialHeaders.union(["X-MyApp-Session"]))
        #expect(widened.limits.maxRedirects == 3)
        #expect(widened.attemptTimeout == plan.attemptTimeout)
    }
}
