import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct CancellationTests {
    /// Where a test holds the request before cancelling it.
    enum Stage: String, CaseIterable, Sendable {
        case endpointClosure, requestMapping, prepare, delayedStub, transport
    }

    struct GatePlugin: Plugin {
        let gate: StageGate
        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            try await gate.pass()
            return request
        }
    }

    @Test(arguments: Stage.allCases)
    func cancellingAtEachStageThrowsCancelledAndPluginsSeeItOnce(stage: Stage) async {
        let gate = StageGate()
        let clock = TestClock()
        let transport = GatedTransport()
        let log = EventLog()
        var plugins: [any Plugin] = [RecordingPlugin("A", log: log)]
        if stage == .prepare { plugins.append(GatePlugin(gate: gate)) }
        let provider = Provider<TestAPI>(
            endpointClosure: { target in
                if stage == .endpointClosure { try await gate.pass() }
                return try Endpoint(target: target)
            },
            requestClosure: { endpoint in
                if stage == .requestMapping { try await gate.pass() }
                return try endpoint.urlRequest()
            },
            stubClosure: { _ in stage == .delayedStub ? .delayed(.seconds(60)) : .never },
            transport: transport,
            plugins: plugins,
            clock: clock
        )
        let request = Task { try await provider.request(.plain) }
        switch stage {
        case .delayedStub: await clock.waitForSleepers(1)
        case .transport: await transport.waitForRequests(1)
        default: await gate.waitForArrivals(1)
        }
        request.cancel()
        let error = (await request.result).failure as? CourierError
        #expect(error?.isCancellation == true)
        #expect(log.all.filter { $0.hasPrefix("A.didReceive") } == ["A.didReceive(cancelled)"])
        #expect(log.all.filter { $0.hasPrefix("A.process") } == ["A.process(cancelled)"])
        #expect(transport.calls == (stage == .transport ? 1 : 0))
    }

    @Test func alreadyCancelledRequestSendsNothing() async {
        let transport = RecordingTransport()
        let log = EventLog()
        let provider = Provider<TestAPI>(transport: transport, plugins: [RecordingPlugin("A", log: log)])
        let request = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await provider.request(.plain)
        }
        let error = (await request.result).failure as? CourierError
        #expect(error?.isCancellation == true)
        #expect(transport.sent.isEmpty)
        #expect(log.all == ["A.didReceive(cancelled)", "A.process(cancelled)"])
    }

    /// A mapping that ignores cancellation still cannot make the request go out afterwards.
    @Test func cancelDuringAStageThatIgnoresItStopsAtTheNextBoundary() async {
        let entered = StageGate()
        let release = Locked<CheckedContinuation<Void, Never>?>(nil)
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            endpointClosure: { target in
                // Suspends without looking at cancellation.
                await withCheckedContinuation { continuation in
                    release.withLock { $0 = continuation }
                    Task { try? await entered.pass() }
                }
                return try Endpoint(target: target)
            },
            transport: transport
        )
        entered.open()
        let request = Task { try await provider.request(.plain) }
        await entered.waitForArrivals(1)
        request.cancel()
        release.withLock { $0?.resume() }
        #expect(((await request.result).failure as? CourierError)?.isCancellation == true)
        #expect(transport.sent.isEmpty)
    }

    @Test func transportErrorsFromACancelledTaskBecomeCancelled() async {
        struct Aborted: Error {}
        struct AbortingTransport: Transport {
            let gate: StageGate
            func send(_ transfer: Transfer) async throws -> Response {
                do { try await gate.pass() } catch { throw Aborted() }
                return Response(statusCode: 200, data: Data())
            }
        }
        let gate = StageGate()
        let provider = Provider<TestAPI>(transport: AbortingTransport(gate: gate))
        let request = Task { try await provider.request(.plain) }
        await gate.waitForArrivals(1)
        request.cancel()
        #expect(((await request.result).failure as? CourierError)?.isCancellation == true)
    }

    @Test func cancellingOneRequestLeavesTheOthersAlone() async throws {
        let transport = GatedTransport()
        let provider = Provider<TestAPI>(transport: transport)
        let doomed = Task { try await provider.request(.item(id: 1)) }
        let survivors = (2...5).map { id in Task { try await provider.request(.item(id: id)) } }
        await transport.waitForRequests(5)
        doomed.cancel()
        #expect(((await doomed.result).failure as? CourierError)?.isCancellation == true)
        transport.release(statusCode: 200)
        for survivor in survivors {
            #expect(try await survivor.value.statusCode == 200)
        }
        #expect(transport.cancellations == 1)
    }

    /// The URLSession transport remembers a cancel that lands before its task starts: it never starts.
    @Test func urlSessionTransportHonoursACancelBeforeStart() async {
        let transport = URLSessionTransport()
        let request = URLRequest(url: URL(string: "http://127.0.0.1:9/never")!)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(request)
        }
        let error = (await task.result).failure
        #expect(CourierError(error ?? URLError(.unknown)).isCancellation)
    }
}
