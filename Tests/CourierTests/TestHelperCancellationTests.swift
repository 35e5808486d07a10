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

    @Test(arguments: [true, false]) func waitForRecordingsEndsWhenCancelled(waiting: Bool) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let recorder = ReplayTransport(
            fixture: folder.url.appendingPathComponent("open.har"), mode: .record,
            upstream: ReplayHardeningTests.LiveFeed(events: ["data: 1\n\n"]))
        let request = URLRequest(url: URL(string: "https://api.example.com/v1/feed")!)
        // The feed stays open while its reader is here: its recording is not written yet.
        let (leave, leaving) = AsyncStream<Void>.makeStream()
        let streaming = Locked(false)
        let reader = Task {
            let body = try await recorder.stream(Transfer(request: request)).body
            streaming.withLock { $0 = true }
            for await _ in leave { break }
            for try await _ in body { break }
        }
        #expect(await eventually { streaming.withLock { $0 } })
        let ended = Locked(false)
        let call = Task {
            await recorder.waitForRecordings()
            ended.withLock { $0 = true }
        }
        if waiting { #expect(await eventually { recorder.recordingWaiterCount == 1 }) }
        call.cancel()
        let endedAlone = await eventually({ ended.withLock { $0 } }, tries: 100_000)
        #expect(endedAlone, "waitForRecordings went on waiting after its task was cancelled")
        // The reader leaves: the recording is written, and a later wait is answered as usual.
        leaving.yield()
        try await reader.value
        await call.value
        #expect(recorder.recordingWaiterCount == 0)
        await recorder.waitForRecordings()
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("open.har").path))
    }
}
