import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Waiting points answer a cancelled caller at once; deadlines cover the whole call and release
/// their memory when the request ends.
@Suite struct WaitingPointTests {
    /// Refreshes wait on a gate, so a test can hold one open.
    struct SlowRefresh: Authenticator {
        let gate: StageGate
        let refreshes: Locked<Int>
        let cancelledRefreshes: Locked<Int>
        func apply(_ credential: String, to request: inout URLRequest) {
            request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        }
        func refresh(_ credential: String) async throws -> String {
            refreshes.withLock { $0 += 1 }
            do {
                try await gate.pass()
            } catch {
                cancelledRefreshes.withLock { $0 += 1 }
                throw error
            }
            return "fresh"
        }
    }

    /// Answers 401 to the stale credential and 200 to the fresh one.
    static func transport() -> RecordingTransport {
        RecordingTransport { request in
            let fresh = request.value(forHTTPHeaderField: "Authorization") == "Bearer fresh"
            return Response(statusCode: fresh ? 200 : 401, data: Data(), request: request)
        }
    }

    /// A provider whose credential refresh waits on `gate`; `cancelled` counts refreshes that
    /// ended by cancellation.
    static func slowRefresh(
        gate: StageGate, cancelled: Locked<Int>
    ) -> (Provider<TestAPI>, Authentication<SlowRefresh>) {
        let auth = Authentication(
            SlowRefresh(gate: gate, refreshes: Locked(0), cancelledRefreshes: cancelled), credential: "stale")
        return (Provider<TestAPI>(transport: transport(), authentication: auth), auth)
    }

    @Test func aCallerWaitingForARefreshIsAnsweredAtOnceWhenCancelled() async throws {
        let gate = StageGate()
        let cancelled = Locked(0)
        let (provider, auth) = Self.slowRefresh(gate: gate, cancelled: cancelled)
        let first = Task { try await provider.request(.plain) }
        await gate.waitForArrivals(1)
        let second = Task { try await provider.request(.plain) }
        // Both callers are now waiting for the refresh (the second in `sign`); cancel the second.
        #expect(await eventually { await auth.refreshWaiterCount == 2 })
        second.cancel()
        guard case .cancelled = (await second.result).failure as? CourierError else {
            Issue.record("expected cancelled")
            return
        }
        // The refresh goes on for the first caller.
        #expect(cancelled.withLock { $0 } == 0)
        gate.open()
        #expect(try await first.value.statusCode == 200)
    }

    @Test func theRefreshIsCancelledWhenTheLastWaiterLeaves() async throws {
        let gate = StageGate()
        let cancelled = Locked(0)
        let (provider, auth) = Self.slowRefresh(gate: gate, cancelled: cancelled)
        let only = Task { try await provider.request(.plain) }
        await gate.waitForArrivals(1)
        only.cancel()
        guard case .cancelled = (await only.result).failure as? CourierError else {
            Issue.record("expected cancelled")
            return
        }
        #expect(await eventually { cancelled.withLock { $0 } == 1 })
        #expect(await auth.isRefreshing == false)
    }

    /// Refreshes abandoned by their callers (cancelled while a slow token endpoint answered) do
    /// not use up the refresh limit, which is for a server that refuses every fresh credential.
    /// Found by review.
    @Test func abandonedRefreshesDoNotUseUpTheLimit() async throws {
        let gate = StageGate()
        let cancelled = Locked(0)
        let auth = Authentication(
            SlowRefresh(gate: gate, refreshes: Locked(0), cancelledRefreshes: cancelled), credential: "stale",
            maxRefreshes: 2, clock: TestClock())
        let provider = Provider<TestAPI>(transport: Self.transport(), clock: TestClock(), authentication: auth)
        // As many abandoned refreshes as the limit allows; the next one must still start.
        for arrival in 1...2 {
            let call = Task { try await provider.request(.plain) }
            await gate.waitForArrivals(arrival)
            call.cancel()
            _ = await call.result
            #expect(await eventually { cancelled.withLock { $0 } == arrival })
            #expect(await eventually { await auth.runningRefreshCount == 0 })
        }
        gate.open()
        #expect(try await provider.request(.plain).statusCode == 200)
        #expect(await auth.refreshCount == 1)
    }

    /// Refreshes that each wait until the test lets them go, cancelled or not (an authenticator
    /// that never looks at cancellation), then give "fresh".
    final class HeldRefreshes: Authenticator {
        private struct State {
            var held: [CheckedContinuation<Void, Never>?] = []
            var isOpen = false
        }
        private let state = Locked(State())
        /// The refreshes (numbered from 0) that fail when let go, as a token endpoint refusing
        /// a rotated refresh token.
        let failing: Set<Int>

        init(failing: Set<Int> = []) {
            self.failing = failing
        }

        func apply(_ credential: String, to request: inout URLRequest) {
            request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        }

        func refresh(_ credential: String) async throws -> String {
            let number = state.withLock { $0.held.count }
            await withCheckedContinuation { continuation in
                let go = state.withLock { state in
                    state.held.append(state.isOpen ? nil : continuation)
                    return state.isOpen
                }
                if go { continuation.resume() }
            }
            if failing.contains(number) { throw URLError(.userAuthenticationRequired) }
            return "fresh"
        }

        /// How many refreshes began.
        var arrived: Int { state.withLock { $0.held.count } }

        /// Lets refresh number `index` (from 0) return.
        func release(_ index: Int) {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard state.held.indices.contains(index) else { return nil }
                defer { state.held[index] = nil }
                return state.held[index]
            }
            continuation?.resume()
        }

        /// Lets every refresh return, those to come too.
        func open() {
            let held = state.withLock { state in
                state.isOpen = true
                defer { state.held = state.held.map { _ in nil } }
                return state.held.compactMap { $0 }
            }
            held.forEach { $0.resume() }
        }
    }

    /// A provider whose first call was cancelled while its refresh (number 0 of `refreshes`) is
    /// held: the refresh is abandoned, still running.
    private func abandonedRefresh(
        _ refreshes: HeldRefreshes
    ) async -> (Provider<TestAPI>, Authentication<HeldRefreshes>)? {
        let auth = Authentication(refreshes, credential: "stale")
        let provider = Provider<TestAPI>(transport: Self.transport(), authentication: auth)
        let first = Task { try await provider.request(.plain) }
        #expect(await eventually { refreshes.arrived == 1 })
        first.cancel()
        guard case .cancelled = (await first.result).failure as? CourierError else {
            Issue.record("expected cancelled")
            return nil
        }
        return (provider, auth)
    }

    /// A refresh its last waiter abandoned (cancelled) that ends while a newer refresh runs leaves
    /// the newer one in place: requests keep waiting for it instead of going out with the old
    /// credential and starting a third refresh with it (with a refresh token that rotates, that
    /// one fails, and every request with it).
    @Test func anAbandonedRefreshEndingLaterLeavesTheNewerOneInPlace() async throws {
        let refreshes = HeldRefreshes()
        guard let (provider, auth) = await abandonedRefresh(refreshes) else { return }
        #expect(await auth.isRefreshing == false)
        let second = Task { try await provider.request(.plain) }
        #expect(await eventually { refreshes.arrived == 2 })
        #expect(await auth.runningRefreshCount == 2)
        // The abandoned refresh ends now; the second one still runs.
        refreshes.release(0)
        #expect(await eventually { await auth.runningRefreshCount == 1 })
        #expect(await auth.isRefreshing)
        let third = Task { try await provider.request(.item(id: 3)) }
        #expect(await eventually { await auth.refreshWaiterCount == 2 })
        // Every refresh is let go, those still to come too, so a failure here ends instead of
        // hanging.
        refreshes.open()
        #expect(try await second.value.statusCode == 200)
        #expect(try await third.value.statusCode == 200)
        #expect(refreshes.arrived == 2)
        #expect(await auth.refreshCount == 1)
        #expect(await auth.isRefreshing == false)
    }

    /// Found by review: a refresh whose last waiter left (cancelled) but whose token endpoint
    /// answered all the same had its credential thrown away, so the next 401 refreshed again from
    /// the stale one (which a rotating refresh token refuses). It is installed now.
    @Test func anAbandonedRefreshThatStillAnswersInstallsItsCredential() async throws {
        let refreshes = HeldRefreshes()
        guard let (provider, auth) = await abandonedRefresh(refreshes) else { return }
        refreshes.release(0)
        #expect(await eventually { await auth.refreshCount == 1 })
        #expect(await auth.credential == "fresh")
        #expect(try await provider.request(.plain).statusCode == 200)
        #expect(refreshes.arrived == 1)
    }

    /// Found by review of the fix above: a refresh started while an abandoned one still ran (both
    /// from the stale credential) that then failed, because the abandoned one's answer rotated
    /// the refresh token, failed its callers although a credential was installed meanwhile.
    /// They go on with that credential.
    @Test func aRefreshThatFailsAfterAnAbandonedOneInstalledGoesOnWithItsCredential() async throws {
        let refreshes = HeldRefreshes(failing: [1])
        guard let (provider, auth) = await abandonedRefresh(refreshes) else { return }
        let second = Task { try await provider.request(.plain) }
        #expect(await eventually { refreshes.arrived == 2 })
        refreshes.release(0)
        #expect(await eventually { await auth.refreshCount == 1 })
        refreshes.release(1)
        #expect(try await second.value.statusCode == 200)
        #expect(refreshes.arrived == 2)
    }

    @Test func theCallTimeoutCoversARefreshThatHangs() async throws {
        let clock = TestClock()
        let gate = StageGate()
        let auth = Authentication(
            SlowRefresh(gate: gate, refreshes: Locked(0), cancelledRefreshes: Locked(0)), credential: "stale")
        let provider = Provider<TestAPI>(
            transport: Self.transport(), clock: clock, callTimeout: .seconds(3), authentication: auth)
        let request = Task { try await provider.request(.plain) }
        await gate.waitForArrivals(1)
        clock.advance(by: .seconds(3))
        guard case .timedOut(let limit) = (await request.result).failure as? CourierError else {
            Issue.record("expected timedOut")
            return
        }
        #expect(limit == .seconds(3))
    }

    /// Found by review: a deadline of zero or less raced its timer, and the request could reach
    /// the transport before the caller was told `timedOut` (a POST then went out with an unknown
    /// outcome). Nothing is sent now; plugins still see the call end, timed out.
    @Test(arguments: [Duration.zero, .seconds(-1)], [true, false])
    func aDeadlineThatHasPassedSendsNothing(deadline: Duration, forTheCall: Bool) async throws {
        let transport = RecordingTransport()
        let log = EventLog()
        let (finished, finishing) = AsyncStream.makeStream(of: Void.self)
        let provider = Provider<TestAPI>(
            transport: transport, plugins: [OutcomePlugin(log: log, finished: finishing)],
            timeout: forTheCall ? nil : deadline, callTimeout: forTheCall ? deadline : nil)
        for _ in 0..<20 {
            guard
                case .timedOut(deadline) = (await Task { try await provider.request(.upload(Data("x".utf8))) }.result)
                    .failure as? CourierError
            else {
                Issue.record("expected timedOut")
                return
            }
        }
        var iterator = finished.makeAsyncIterator()
        for _ in 0..<20 { _ = await iterator.next() }
        #expect(transport.sent.isEmpty)
        #expect(log.all.filter { $0.hasPrefix("didFinish") }.count == 20)
        #expect(log.all.allSatisfy { !$0.contains("success") }, "\(log.all)")
    }

    /// Records what `didReceive`, `process` and `didFinish` see, and tells when `didFinish` ran.
    struct OutcomePlugin: Plugin {
        let log: EventLog
        let finished: AsyncStream<Void>.Continuation
        func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {
            log.append("didReceive(\(RecordingPlugin.describe(result)))")
        }
        func process(
            _ result: Result<Response, CourierError>, context: RequestContext
        ) async -> Result<Response, CourierError> {
            log.append("process(\(RecordingPlugin.describe(result)))")
            return result
        }
        func didFinish(_ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext) async
        {
            log.append("didFinish(\(RecordingPlugin.describe(result)))")
            finished.yield()
        }
    }

    /// How a call with a 3 s deadline whose transport never answers ends: by the deadline, or by
    /// the caller's cancel. The caller's error, what the plugin saw, and the transport's calls.
    func outcome(cancelled: Bool, retries: Bool) async -> (CourierError?, [String], Int) {
        let clock = TestClock()
        let transport = GatedTransport()
        let log = EventLog()
        let (finished, finishing) = AsyncStream.makeStream(of: Void.self)
        let provider = Provider<TestAPI>(
            transport: transport, plugins: [OutcomePlugin(log: log, finished: finishing)], clock: clock,
            callTimeout: .seconds(3), retryPolicy: retries ? RetryPolicy(maxAttempts: 3) : .disabled)
        let request = Task { try await provider.request(.plain) }
        await transport.waitForRequests(1)
        if cancelled { request.cancel() } else { clock.advance(by: .seconds(3)) }
        let error = (await request.result).failure as? CourierError
        var iterator = finished.makeAsyncIterator()
        _ = await iterator.next()
        return (error, log.all, transport.calls)
    }

    /// The caller is answered `.timedOut` when the call's deadline passes, and the plugins see
    /// the same, not the cancel that stopped the stages (found by review). Nothing is retried. A
    /// caller's own cancel is still `.cancelled` to both.
    @Test(arguments: [(false, false), (false, true), (true, false)])
    func pluginsSeeWhatEndedTheCall(cancelled: Bool, retries: Bool) async throws {
        let (error, seen, calls) = await outcome(cancelled: cancelled, retries: retries)
        let word = cancelled ? "cancelled" : "timedOut"
        switch error {
        case .timedOut(.seconds(3))? where !cancelled, .cancelled? where cancelled: break
        default: Issue.record("the caller got \(String(describing: error))")
        }
        #expect(seen == ["didReceive(\(word))", "process(\(word))", "didFinish(\(word))"])
        #expect(calls == 1)
    }

    @Test func theCallTimeoutAnswersEvenWhenAMappingNeverReturns() async throws {
        let clock = TestClock()
        let stuck = StuckForever()
        let provider = Provider<TestAPI>(
            endpointClosure: { target in
                await stuck.wait()
                return try Endpoint(target: target)
            }, transport: RecordingTransport(), clock: clock, callTimeout: .seconds(2))
        let request = Task { try await provider.request(.plain) }
        await stuck.waitForArrival()
        clock.advance(by: .seconds(2))
        guard case .timedOut = (await request.result).failure as? CourierError else {
            Issue.record("expected timedOut")
            return
        }
        stuck.release()
    }

    @Test func deadlinesReleaseTheirMemoryWhenRequestsEnd() async throws {
        let clock = TestClock()
        let provider = Provider<TestAPI>(
            stubClosure: Provider.immediatelyStub, clock: clock, timeout: .seconds(10), callTimeout: .seconds(20))
        for _ in 0..<2_000 {
            _ = try await provider.request(.plain)
        }
        let timer = try #require(provider.deadlines as? DeadlineTimer<TestClock>)
        #expect(timer.pendingCount == 0)
        // One sleeper per distinct deadline length (the call's and the exchange's), not one per
        // request.
        #expect(clock.sleeperCount == 2)
    }

    @Test func progressStreamsThrowWhenTheirTaskIsCancelled() async throws {
        let clock = TestClock()
        let provider = Provider<TestAPI>(stubClosure: Provider.delayedStub(.seconds(10)), clock: clock)
        let stream = provider.requestWithProgress(.plain)
        let consumer = Task { () throws(CourierError) -> Int in
            var count = 0
            for try await _ in stream { count += 1 }
            return count
        }
        await clock.waitForSleepers(1)
        consumer.cancel()
        guard case .cancelled = (await consumer.result).failure as? CourierError else {
            Issue.record("expected cancelled, got \(await consumer.result)")
            return
        }
    }

    @Test func aProgressStreamIteratedTwiceIsATypedError() async throws {
        let provider = Provider<TestAPI>(stubClosure: Provider.immediatelyStub)
        let stream = provider.requestWithProgress(.plain)
        var first = stream.makeAsyncIterator()
        var second = stream.makeAsyncIterator()
        await #expect {
            _ = try await second.next()
        } throws: { error in
            guard case CourierError.invalidUse = error else { return false }
            return true
        }
        var last: ProgressEvent?
        while let event = try await first.next() { last = event }
        #expect(last?.isCompleted == true)
    }
}

/// A stage that never returns, ignoring cancellation, until the test releases it.
final class StuckForever: Sendable {
    private let gate = StageGate()
    private let released = Locked(false)

    func wait() async {
        // A child that ignores the caller's cancellation.
        await Task { try? await gate.pass() }.value
    }

    func waitForArrival() async { await gate.waitForArrivals(1) }

    func release() { gate.open() }
}
