import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Traffic control through the provider: limits counted at the transport, priorities, cancellation
/// and deadlines in the queue, streamed bodies, shared requests and the shared `Retry-After` pause.
@Suite(.timeLimit(.minutes(2))) struct TrafficTests {
    struct Call: TargetType {
        var name = "a"
        var host = "api.example.com"
        var traffic: TrafficClass = .normal
        var validation: ValidationType = .none
        var baseURL: URL { URL(string: "https://\(host)")! }
        var path: String { name }
        var headers: [String: String] { [:] }
    }

    /// Counts requests in the transport at once, and the most ever, around a gated transport.
    final class CountingTransport: Transport, Sendable {
        let gate = GatedTransport()
        private let counts = Locked((now: 0, most: 0, order: [String]()))
        var most: Int { counts.withLock { $0.most } }
        var order: [String] { counts.withLock { $0.order } }

        func send(_ transfer: Transfer) async throws -> Response {
            let request = transfer.request
            counts.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
                $0.order.append(request.url?.lastPathComponent ?? "")
            }
            defer { counts.withLock { $0.now -= 1 } }
            return try await gate.send(transfer)
        }
    }

    private func control<T>(_ provider: Provider<T>) throws -> TrafficController {
        try #require(provider.trafficControl)
    }

    @Test func aThousandCallersNeverExceedTheLimit() async throws {
        let transport = CountingTransport()
        let provider = Provider<Call>(
            transport: transport, traffic: TrafficPolicy(maxRequests: 8, maxRequestsPerHost: nil))
        let tasks = (0..<1000).map { index in Task { try await provider.request(Call(name: "\(index)")) } }
        var answered = 0
        var rounds = 0
        while answered < 1000, rounds < 1000 {
            rounds += 1
            let expected = min(8, 1000 - answered)
            await transport.gate.waitForRequests(expected)
            let waiting = transport.gate.waitingCount
            #expect(waiting <= 8)
            transport.gate.release()
            answered += waiting
        }
        for task in tasks { _ = try await task.value }
        #expect(transport.gate.calls == 1000)
        #expect(transport.most == 8)
        let traffic = try control(provider)
        #expect(traffic.inFlight == 0)
        #expect(traffic.waitingCount == 0)
    }

    @Test func perHostLimitCountsEachHost() async throws {
        let transport = CountingTransport()
        let provider = Provider<Call>(
            transport: transport, traffic: TrafficPolicy(maxRequests: 10, maxRequestsPerHost: 2))
        let tasks = (0..<6).map { index in
            Task { try await provider.request(Call(name: "\(index)", host: index % 2 == 0 ? "a.test" : "b.test")) }
        }
        let traffic = try control(provider)
        await traffic.waitFor { waiting, inFlight in waiting == 2 && inFlight == 4 }
        await transport.gate.waitForRequests(4)
        let hosts = transport.gate.waitingRequests.compactMap { $0.url?.host }
        #expect(hosts.filter { $0 == "a.test" }.count == 2)
        #expect(hosts.filter { $0 == "b.test" }.count == 2)
        transport.gate.release()
        await transport.gate.waitForRequests(2)
        transport.gate.release()
        for task in tasks { _ = try await task.value }
        #expect(transport.most == 4)
    }

    @Test func prioritiesOrderTheQueueFIFOWithin() async throws {
        let transport = CountingTransport()
        // A test clock that never moves: aging (by the provider's clock) must not reorder the
        // queue however slowly this machine runs the test.
        let provider = Provider<Call>(
            transport: transport, clock: TestClock(), traffic: TrafficPolicy(maxRequests: 1))
        let traffic = try control(provider)
        let blocker = Task { try await provider.request(Call(name: "blocker")) }
        await transport.gate.waitForRequests(1)
        let queued: [(String, TrafficClass)] = [
            ("low1", .low), ("normal1", .normal), ("high1", .high), ("normal2", .normal), ("high2", .high),
        ]
        var tasks = [blocker]
        for (index, (name, traffic)) in queued.enumerated() {
            tasks.append(Task { try await provider.request(Call(name: name, traffic: traffic)) })
            await provider.trafficControl?.waitFor { waiting, _ in waiting == index + 1 }
        }
        #expect(traffic.waitingCount == 5)
        for served in 1...6 {
            await transport.gate.waitForRequests(1)
            #expect(transport.order.count == served)
            transport.gate.release()
        }
        for task in tasks { _ = try await task.value }
        #expect(transport.order == ["blocker", "high1", "high2", "normal1", "normal2", "low1"])
    }

    @Test func exemptTargetsTakeNoSlot() async throws {
        let transport = CountingTransport()
        let provider = Provider<Call>(transport: transport, traffic: TrafficPolicy(maxRequests: 1))
        let first = Task { try await provider.request(Call(name: "first")) }
        await transport.gate.waitForRequests(1)
        let exempt = Task { try await provider.request(Call(name: "exempt", traffic: .exempt)) }
        await transport.gate.waitForRequests(2)
        #expect(try control(provider).inFlight == 1)
        transport.gate.release()
        _ = try await first.value
        _ = try await exempt.value
    }

    /// A `MultiTarget` (wrapped once or twice) takes the wrapped target's traffic class, with or
    /// without an HTTP cache in the way (the pipeline reads it off the call's plugin target).
    @Test(arguments: [false, true]) func aMultiTargetTakesTheWrappedTargetsTrafficClass(cached: Bool) async throws {
        let transport = CountingTransport()
        let provider = Provider<MultiTarget>(
            transport: transport, traffic: TrafficPolicy(maxRequests: 1), cache: cached ? HTTPCache() : nil)
        let first = Task { try await provider.request(MultiTarget(Call(name: "first"))) }
        await transport.gate.waitForRequests(1)
        let exempt = Task {
            try await provider.request(MultiTarget(MultiTarget(Call(name: "exempt", traffic: .exempt))))
        }
        await transport.gate.waitForRequests(2)
        #expect(try control(provider).inFlight == 1)
        transport.gate.release()
        _ = try await first.value
        _ = try await exempt.value
    }

    @Test func cancellationStormLeavesNoSlotHeld() async throws {
        let transport = CountingTransport()
        let provider = Provider<Call>(transport: transport, traffic: TrafficPolicy(maxRequests: 2))
        let traffic = try control(provider)
        let tasks = (0..<300).map { index in Task { try await provider.request(Call(name: "\(index)")) } }
        await traffic.waitFor { waiting, inFlight in waiting == 298 && inFlight == 2 }
        await transport.gate.waitForRequests(2)
        for task in tasks { task.cancel() }
        for task in tasks {
            await #expect(throws: CourierError.self) { try await task.value }
        }
        await traffic.waitFor { waiting, inFlight in waiting == 0 && inFlight == 0 }
        #expect(transport.gate.calls == 2)
        // The next call goes straight through.
        let next = Task { try await provider.request(Call(name: "next")) }
        await transport.gate.waitForRequests(1)
        transport.gate.release()
        #expect(try await next.value.statusCode == 200)
    }

    /// The tests' wait for a state of the queue ends when its task is cancelled (`waiting`: once it
    /// is registered, or before), so a test past its time limit fails instead of hanging.
    @Test(arguments: [true, false]) func aTestsWaitForTheQueueEndsWhenCancelled(waiting: Bool) async throws {
        let provider = Provider<Call>(transport: CountingTransport(), traffic: TrafficPolicy(maxRequests: 1))
        let traffic = try control(provider)
        let ended = Locked(false)
        let call = Task {
            await traffic.waitFor { waiting, _ in waiting == 1 }
            ended.withLock { $0 = true }
        }
        if waiting { #expect(await eventually { traffic.signalCount == 1 }) }
        call.cancel()
        #expect(await eventually({ ended.withLock { $0 } }, tries: 100_000))
        await call.value
        #expect(traffic.signalCount == 0)
    }

    @Test func aWaiterWhoseDeadlinePassesLeavesTheQueue() async throws {
        let clock = TestClock()
        let transport = CountingTransport()
        let provider = Provider<Call>(
            transport: transport, clock: clock, timeout: .seconds(5), traffic: TrafficPolicy(maxRequests: 1))
        let traffic = try control(provider)
        let first = Task { try await provider.request(Call(name: "first")) }
        await transport.gate.waitForRequests(1)
        let second = Task { try await provider.request(Call(name: "second")) }
        await traffic.waitFor { waiting, _ in waiting == 1 }
        clock.advance(by: .seconds(5))
        await #expect(throws: CourierError.self) { try await first.value }
        await #expect(throws: CourierError.self) { try await second.value }
        await traffic.waitFor { waiting, inFlight in waiting == 0 && inFlight == 0 }
        #expect(transport.gate.calls == 1)
    }

    /// How a call's exchange runs, for the queue-wait checks below.
    enum Route: String, CaseIterable, Sendable {
        /// On the call's own task.
        case plain
        /// Within a per-attempt deadline: on a task of its own.
        case deadline
        /// Behind the HTTP cache, which admits what it sends itself.
        case cache
        /// A stream, on the call's own task.
        case stream
        /// A stream within a per-attempt deadline.
        case streamWithDeadline
        /// De-duplicated: the shared exchange runs on a task of its own.
        case shared
    }

    /// A call's queue wait reaches its metrics whichever way its exchange runs (the waits travel
    /// back with the exchange, or through a box from a task of its own).
    @Test(arguments: Route.allCases) func queueWaitShowsInMetricsOnEveryRoute(_ route: Route) async throws {
        let clock = TestClock()
        let transport = CountingTransport()
        let timed = route == .deadline || route == .streamWithDeadline
        let provider = Provider<Call>(
            transport: transport, clock: clock, timeout: timed ? .seconds(600) : nil,
            deduplication: route == .shared ? .enabled : .disabled, traffic: TrafficPolicy(maxRequests: 1),
            cache: route == .cache ? HTTPCache(storage: MemoryCacheStorage(), now: clock.wallClock()) : nil)
        let traffic = try control(provider)
        let first = Task { try await provider.request(Call(name: "first")) }
        await transport.gate.waitForRequests(1)
        let second = Task { () async throws -> RequestMetrics? in
            guard route == .stream || route == .streamWithDeadline else {
                return try await provider.request(Call(name: "second")).metrics
            }
            let stream = try await provider.stream(Call(name: "second"))
            for try await _ in stream.chunks {}
            return stream.head.metrics
        }
        await traffic.waitFor { waiting, _ in waiting == 1 }
        clock.advance(by: .seconds(3))
        transport.gate.release()
        _ = try await first.value
        await transport.gate.waitForRequests(1)
        transport.gate.release()
        let metrics = try #require(try await second.value)
        #expect(metrics.trafficWaits == [TrafficWait(attempt: 1, queue: .seconds(3), pause: .zero)])
        #expect(metrics.queueWait == .seconds(3) && metrics.pauseWait == .zero)
        await traffic.waitFor { waiting, inFlight in waiting == 0 && inFlight == 0 }
    }

    /// Callers that join a shared exchange report no wait of their own; the caller that started
    /// it reports the exchange's.
    @Test func onlyTheCallerThatStartedASharedExchangeReportsItsWait() async throws {
        let clock = TestClock()
        let transport = CountingTransport()
        let provider = Provider<Call>(
            transport: transport, clock: clock, deduplication: .enabled, traffic: TrafficPolicy(maxRequests: 1))
        let traffic = try control(provider)
        let first = Task { try await provider.request(Call(name: "first")) }
        await transport.gate.waitForRequests(1)
        let starter = Task { try await provider.request(Call(name: "same")) }
        await traffic.waitFor { waiting, _ in waiting == 1 }
        let joined = Task { try await provider.request(Call(name: "same")) }
        // "first", the starter and the joined caller.
        await provider.waitForInflightWaiters(3)
        clock.advance(by: .seconds(3))
        transport.gate.release()
        _ = try await first.value
        await transport.gate.waitForRequests(1)
        transport.gate.release()
        let started = try #require(try await starter.value.metrics)
        let joinedMetrics = try #require(try await joined.value.metrics)
        #expect(started.trafficWaits == [TrafficWait(attempt: 1, queue: .seconds(3), pause: .zero)])
        #expect(joinedMetrics.attempts.first?.joinedSharedRequest == true)
        #expect(joinedMetrics.trafficWaits.isEmpty)
        #expect(transport.gate.calls == 2)
    }

    @Test func aJoinedCallerTakesNoSlot() async throws {
        let transport = CountingTransport()
        let provider = Provider<Call>(
            transport: transport, deduplication: .enabled, traffic: TrafficPolicy(maxRequests: 1))
        let tasks = (0..<10).map { _ in Task { try await provider.request(Call(name: "same")) } }
        await provider.waitForInflightWaiters(10)
        await transport.gate.waitForRequests(1)
        let traffic = try control(provider)
        #expect(traffic.inFlight == 1)
        #expect(traffic.waitingCount == 0)
        transport.gate.release()
        for task in tasks { _ = try await task.value }
        #expect(transport.gate.calls == 1)
    }

    @Test func aStreamHoldsItsSlotUntilItsBodyEnds() async throws {
        let transport = CountingTransport()
        let provider = Provider<Call>(transport: transport, traffic: TrafficPolicy(maxRequests: 1))
        let traffic = try control(provider)
        let streaming = Task { try await provider.stream(Call(name: "stream")) }
        await transport.gate.waitForRequests(1)
        transport.gate.release(statusCode: 200, data: Data("body".utf8))
        let stream = try await streaming.value
        let next = Task { try await provider.request(Call(name: "next")) }
        await traffic.waitFor { waiting, inFlight in waiting == 1 && inFlight == 1 }
        var received = Data()
        for try await chunk in stream.chunks { received.append(chunk) }
        #expect(received == Data("body".utf8))
        await transport.gate.waitForRequests(1)
        transport.gate.release()
        _ = try await next.value
    }

    @Test func aStreamLeftEarlyGivesItsSlotBack() async throws {
        let transport = CountingTransport()
        let provider = Provider<Call>(transport: transport, traffic: TrafficPolicy(maxRequests: 1))
        let traffic = try control(provider)
        let streaming = Task { try await provider.stream(Call(name: "stream")) }
        await transport.gate.waitForRequests(1)
        transport.gate.release(statusCode: 200, data: Data("body".utf8))
        let stream = try await streaming.value
        #expect(traffic.inFlight == 1)
        stream.chunks.buffer.terminate()
        await traffic.waitFor { _, inFlight in inFlight == 0 }
    }

    /// Behind the HTTP cache, only what goes to the network takes a slot: a fresh stored response
    /// answers at once while another call holds the only slot (before, the hit queued behind it,
    /// and behind a host's `Retry-After` pause too).
    @Test func aCacheHitTakesNoSlot() async throws {
        let clock = TestClock()
        let transport = CountingTransport()
        let provider = Provider<Call>(
            transport: transport, clock: clock, traffic: TrafficPolicy(maxRequests: 1),
            cache: HTTPCache(storage: MemoryCacheStorage(), now: clock.wallClock()))
        let traffic = try control(provider)
        let storing = Task { try await provider.request(Call(name: "fresh")) }
        await transport.gate.waitForRequests(1)
        transport.gate.release { request in
            .success(
                Response(
                    statusCode: 200, data: Data("stored".utf8), request: request, url: request.url!,
                    headerFields: [("Cache-Control", "max-age=600")]))
        }
        _ = try await storing.value
        let slow = Task { try await provider.request(Call(name: "slow")) }
        await transport.gate.waitForRequests(1)
        #expect(traffic.inFlight == 1)
        // Bounded either way: a hit that queues for the slot gets it once `slow` is released.
        let hitEnded = Locked(false)
        let releaser = Task {
            await traffic.waitFor { waiting, _ in waiting >= 1 || hitEnded.withLock { $0 } }
            transport.gate.release()
        }
        let hit = try await provider.request(Call(name: "fresh"))
        // Answered while `slow` still holds the only slot.
        let slowStillHeld = transport.gate.waitingCount == 1
        hitEnded.withLock { $0 = true }
        transport.gate.release()
        _ = try await slow.value
        await releaser.value
        #expect(slowStillHeld)
        #expect(hit.cacheStatus == .hit)
        #expect(String(decoding: hit.data, as: UTF8.self) == "stored")
        #expect(transport.gate.calls == 2)
        await traffic.waitFor { _, inFlight in inFlight == 0 }
    }

    private func limited(_ request: URLRequest, retryAfter: String) -> Result<Response, any Error> {
        .success(
            Response(
                statusCode: 429, data: Data(), request: request,
                url: request.url ?? URL(fileURLWithPath: "/"), headerFields: [("Retry-After", retryAfter)]))
    }

    @Test func retryAfterPausesEveryCallerOfTheHost() async throws {
        let clock = TestClock()
        let transport = CountingTransport()
        let provider = Provider<Call>(
            transport: transport, clock: clock, traffic: TrafficPolicy(maxRequests: nil, maxRequestsPerHost: nil))
        let first = Task { try await provider.request(Call(name: "first")) }
        await transport.gate.waitForRequests(1)
        transport.gate.release { self.limited($0, retryAfter: "10") }
        _ = try await first.value
        let callers = (0..<20).map { index in Task { try await provider.request(Call(name: "\(index)")) } }
        // Another host is not paused.
        let other = Task { try await provider.request(Call(name: "other", host: "other.test")) }
        await transport.gate.waitForRequests(1)
        await clock.waitForSleepers(20)
        #expect(transport.gate.calls == 2)
        transport.gate.release()
        _ = try await other.value
        clock.advance(by: .seconds(9))
        #expect(transport.gate.calls == 2)
        clock.advance(by: .seconds(1))
        await transport.gate.waitForRequests(20)
        transport.gate.release()
        for caller in callers {
            let metrics = try #require(try await caller.value.metrics)
            #expect(metrics.pauseWait == .seconds(10))
        }
    }

    /// Found by review: a `Retry-After` from the host a redirect led to paused the host that was
    /// asked, for every caller. The host that answered is paused.
    @Test func aRedirectTargetsRetryAfterPausesItsOwnHost() async throws {
        let clock = TestClock()
        let transport = CountingTransport()
        let provider = Provider<Call>(
            transport: transport, clock: clock, traffic: TrafficPolicy(maxRequests: nil, maxRequestsPerHost: nil))
        let first = Task { try await provider.request(Call(name: "first")) }
        await transport.gate.waitForRequests(1)
        transport.gate.release { request in
            .success(
                Response(
                    statusCode: 503, data: Data(), request: request, url: URL(string: "https://elsewhere.test/x")!,
                    headerFields: [("Retry-After", "60")]))
        }
        _ = try await first.value
        // The host asked is not paused: the next call to it goes out at once.
        let next = Task { try await provider.request(Call(name: "next")) }
        await transport.gate.waitForRequests(1)
        transport.gate.release()
        let metrics = try #require(try await next.value.metrics)
        #expect(metrics.pauseWait == .zero)
        // The host that answered is.
        let elsewhere = Task { try await provider.request(Call(name: "x", host: "elsewhere.test")) }
        await clock.waitForSleepers(1)
        #expect(transport.gate.calls == 2)
        clock.advance(by: .seconds(60))
        await transport.gate.waitForRequests(1)
        transport.gate.release()
        #expect(try #require(try await elsewhere.value.metrics).pauseWait == .seconds(60))
    }

    @Test func aPauseIsBoundedByMaxPauseAndRetriesWaitForIt() async throws {
        let clock = TestClock()
        let transport = CountingTransport()
        let provider = Provider<Call>(
            transport: transport, clock: clock,
            retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: .zero, maxDelay: .zero, jitter: .none),
            traffic: TrafficPolicy(maxPause: .seconds(5)))
        let call = Task { try await provider.request(Call(name: "retried", validation: .successCodes)) }
        await transport.gate.waitForRequests(1)
        transport.gate.release { self.limited($0, retryAfter: "3600") }
        // The retry policy waits no time; the retry waits for the shared pause: 5 seconds.
        await clock.waitForSleepers(1)
        #expect(transport.gate.calls == 1)
        clock.advance(by: .seconds(5))
        await transport.gate.waitForRequests(1)
        transport.gate.release()
        let metrics = try #require(try await call.value.metrics)
        #expect(metrics.attempts.count == 2)
        #expect(metrics.pauseWait == .seconds(5))
    }

    @Test func theQueueIsBounded() async throws {
        let transport = CountingTransport()
        let provider = Provider<Call>(
            transport: transport, traffic: TrafficPolicy(maxRequests: 1, maxQueuedRequests: 1))
        let first = Task { try await provider.request(Call(name: "first")) }
        await transport.gate.waitForRequests(1)
        let second = Task { try await provider.request(Call(name: "second")) }
        await provider.trafficControl?.waitFor { waiting, _ in waiting == 1 }
        await #expect(throws: CourierError.self) { try await provider.request(Call(name: "third")) }
        transport.gate.release()
        _ = try await first.value
        await transport.gate.waitForRequests(1)
        transport.gate.release()
        _ = try await second.value
    }

    /// Answers at once: `token` gives the new credential, other paths want `Bearer new`.
    final class TokenServer: Transport, Sendable {
        private let counts = Locked((now: 0, most: 0, calls: 0))
        var most: Int { counts.withLock { $0.most } }

        func send(_ transfer: Transfer) async throws -> Response {
            let request = transfer.request
            counts.withLock {
                $0.now += 1
                $0.calls += 1
                $0.most = max($0.most, $0.now)
            }
            defer { counts.withLock { $0.now -= 1 } }
            await Task.yield()
            let url = request.url ?? URL(fileURLWithPath: "/")
            if url.lastPathComponent == "token" {
                return Response(statusCode: 200, data: Data("new".utf8), request: request)
            }
            let accepted = request.value(forHTTPHeaderField: "Authorization") == "Bearer new"
            return Response(statusCode: accepted ? 200 : 401, data: Data(), request: request)
        }
    }

    /// Refreshes to `new` once the gate opens.
    struct GatedRefresh: Authenticator {
        let gate: StageGate

        func apply(_ credential: String, to request: inout URLRequest) {
            request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        }

        func refresh(_ credential: String) async throws -> String {
            try await gate.pass()
            return "new"
        }
    }

    @Test func callsWaitingForARefreshHoldNoSlot() async throws {
        let transport = TokenServer()
        let gate = StageGate()
        let provider = Provider<Call>(
            transport: transport, traffic: TrafficPolicy(maxRequests: 1),
            authentication: Authentication(GatedRefresh(gate: gate), credential: "old"))
        let traffic = try control(provider)
        let tasks = (0..<20).map { index in
            Task { try await provider.request(Call(name: "\(index)", validation: .successCodes)) }
        }
        // The refresh is held; the calls refused with the old credential wait for it, in no slot.
        await gate.waitForArrivals(1)
        await traffic.waitFor { waiting, inFlight in waiting == 0 && inFlight == 0 }
        gate.open()
        for task in tasks { #expect(try await task.value.statusCode == 200) }
        #expect(transport.most == 1)
        await traffic.waitFor { waiting, inFlight in waiting == 0 && inFlight == 0 }
    }
}
