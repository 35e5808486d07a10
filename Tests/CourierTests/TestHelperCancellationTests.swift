import Courier
import Foundation
import Testing

@testable import CourierTesting

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// CourierTesting's waits end when the waiting task is cancelled, so a test past its time limit
/// (which cancels it) fails instead of hanging the run.
@Suite struct TestHelperCancellationTests {
    /// `waiting`: cancelled once its wait is registered (the cancellation handler's path), or
    /// at once (the check before waiting).
    @Test(arguments: [true, false]) func waitForSleepersEndsWhenCancelled(waiting: Bool) async {
        let clock = TestClock()
        let ended = Locked(false)
        let call = Task {
            await clock.waitForSleepers(1)
            ended.withLock { $0 = true }
        }
        if waiting { #expect(await eventually { clock.waiterCount == 1 }) }
        call.cancel()
        let endedAlone = await eventually({ ended.withLock { $0 } }, tries: 100_000)
        #expect(endedAlone, "waitForSleepers went on waiting after its task was cancelled")
        if !endedAlone {
            // Let it go: a sleeper to count.
            let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
            await call.value
            sleeper.cancel()
        }
        await call.value
        #expect(clock.waiterCount == 0)
        // Nothing is left waiting: a later wait is answered by a sleeper as usual.
        let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        try? await sleeper.value
    }

    @Test(arguments: [true, false]) func waitForRequestsEndsWhenCancelled(waiting: Bool) async throws {
        let transport = GatedTransport()
        let ended = Locked(false)
        let call = Task {
            await transport.waitForRequests(1)
            ended.withLock { $0 = true }
        }
        if waiting { #expect(await eventually { transport.signalCount == 1 }) }
        call.cancel()
        let endedAlone = await eventually({ ended.withLock { $0 } }, tries: 100_000)
        #expect(endedAlone, "waitForRequests went on waiting after its task was cancelled")
        if !endedAlone {
            let request = Task { try await transport.send(URLRequest(url: URL(string: "https://example.com")!)) }
            await call.value
            transport.release()
            _ = try? await request.value
        }
        await call.value
        #expect(transport.signalCount == 0)
    }
}
