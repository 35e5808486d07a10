@_spi(Testing) import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Stress {
    /// Load and storms: many requests through one provider, answered, then everything released.
    @Suite(.enabled(if: FaultServer.isAvailable, "needs COURIER_FAULT_URL (run scripts/test)"), .timeLimit(.minutes(5)))
    struct LoadAndStormTests {
        @Test func tenThousandRequestsAreAllAnsweredAndEverythingIsReleased() async throws {
            let released:
                (
                    provider: WeakReference<Provider<Fault>>, transport: WeakReference<URLSessionTransport>,
                    session: WeakReference<URLSession>
                )
            do {
                let transport = URLSessionTransport()
                let provider = Provider<Fault>(transport: transport, deduplication: .disabled)
                released = (WeakReference(provider), WeakReference(transport), WeakReference(transport.session))
                let answered = try await withThrowingTaskGroup(of: Int.self) { group in
                    // Bounded concurrency: 64 requests at a time, 10,000 in all. The deadline is generous:
                    // this checks that every request is answered and released, and under sanitizers
                    // the fault server is shared with the hostile-server tests.
                    var started = 0
                    var answered = 0
                    for _ in 0..<64 {
                        group.addTask {
                            try await provider.request(Fault(path: "ok", timeout: .seconds(60))).statusCode
                        }
                        started += 1
                    }
                    for try await code in group {
                        #expect(code == 200)
                        answered += 1
                        if started < 10_000 {
                            group.addTask {
                                try await provider.request(Fault(path: "ok", timeout: .seconds(60))).statusCode
                            }
                            started += 1
                        }
                    }
                    return answered
                }
                #expect(answered == 10_000)
                #expect(await provider.inflightCount == 0)
            }
            // Nothing keeps the provider or its session alive: no leaked task or retain cycle.
            #expect(await eventually { released.provider.isReleased && released.transport.isReleased })
            // The transport invalidates its session on release; FoundationNetworking then lets it go.
            #expect(await eventually { released.session.isReleased })
        }

        @Test(arguments: 0..<3)
        func cancellationStormAgainstSlowEndpoints(round: Int) async throws {
            let provider = Provider<Fault>(deduplication: .enabled)
            let paths = ["stall-headers", "stall-body", "short-body", "ok"]
            let tasks = (0..<1_000).map { index in
                Task { () -> Result<Response, CourierError> in
                    do throws(CourierError) {
                        return .success(
                            // The deadline is far beyond the server's bounded stall: this test is about
                            // cancellation, and must not turn into a race with a deadline when the
                            // machine is slow (ThreadSanitizer, 3,000 callers each with its own deadline).
                            try await provider.request(Fault(path: paths[index % paths.count], timeout: .seconds(600))))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            let random = SeededRandom.forTest("cancellationStormAgainstSlowEndpoints", salt: UInt64(round))
            for task in random.withLock({ tasks.shuffled(using: &$0) }) {
                for _ in 0..<random.int(in: 0...20) { await Task.yield() }
                task.cancel()
            }
            for task in tasks {
                switch await task.value {
                case .success(let response):
                    #expect(response.statusCode == 200)
                case .failure(let error):
                    // Cancelled, or — when the storm outlasts the server's bounded stall (slow under
                    // sanitizers) — the server's close, reported as a transport error. Never anything else.
                    let closedByServer = error.underlyingError is URLError
                    #expect(error.isCancellation || closedByServer, "\(error)")
                }
            }
            #expect(await provider.inflightCount == 0)
        }
    }
}
