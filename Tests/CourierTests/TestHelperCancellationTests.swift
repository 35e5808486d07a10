import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// CourierTesting's waits end when the waiting task is cancelled, so a test past its time limit
/// (which cancels it) fails instead of hanging the run.
@Suite struct TestHelperCancellationTests {
    @Test func waitForSleepersEndsWhenCancelled() async {
        let clock = TestClock()
        let ended = Locked(false)
        let waiting = Task {
            await clock.waitForSleepers(1)
            ended.withLock { $0 = true }
        }
        waiting.cancel()
        let endedAlone = await eventually({ ended.withLock { $0 } }, tries: 100_000)
        #expect(endedAlone, "waitForSleepers went on waiting after its task was cancelled")
        if !endedAlone {
            // Let it go: a sleeper to count.
            let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
            await waiting.value
            sleeper.cancel()
        }
        await waiting.value
        // Nothing is left waiting: a later wait is answered by a sleeper as usual.
        let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        try? await sleeper.value
    }

    @Test func waitForRequestsEndsWhenCancelled() async throws {
        let transport = GatedTransport()
        let ended = Locked(false)
        let waiting = Task {
            await transport.waitForRequests(1)
            ended.withLock { $0 = true }
        }
        waiting.cancel()
        let endedAlone = await eventually({ ended.withLock { $0 } }, tries: 100_000)
        #expect(endedAlone, "waitForRequests went on waiting after its task was cancelled")
        if !endedAlone {
            let request = Task { try await transport.send(URLRequest(url: URL(string: "https://example.com")!)) }
            await waiting.value
            transport.release()
            _ = try? await request.value
        }
        await waiting.value
    }
}
