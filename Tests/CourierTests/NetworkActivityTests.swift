import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct NetworkActivityTests {
    @Test func countsRequestsOnTheWire() async throws {
        let changes = EventLog()
        let activity = NetworkActivityPlugin { change, _ in changes.append("\(change)") }
        let counts = await activity.activeCounts()
        let transport = GatedTransport()
        let provider = Provider<TestAPI>(transport: transport, plugins: [activity])
        let tasks = (0..<3).map { id in Task { try await provider.request(.item(id: id)) } }
        await transport.waitForRequests(3)
        #expect(await activity.activeCount == 3)
        transport.release()
        for task in tasks { _ = try await task.value }
        #expect(await activity.activeCount == 0)
        #expect(changes.all.filter { $0 == "began" }.count == 3)
        #expect(changes.all.filter { $0 == "ended" }.count == 3)
        var seen: [Int] = []
        for await count in counts {
            seen.append(count)
            if seen.count == 7 { break }
        }
        #expect(seen.first == 0 && seen.last == 0 && seen.max() == 3)
    }

    @Test func aRequestCancelledBeforeSendingNeverBeganOrEnded() async throws {
        let activity = NetworkActivityPlugin()
        let transport = GatedTransport()
        let provider = Provider<TestAPI>(transport: transport, plugins: [activity])
        let inFlight = Task { try await provider.request(.item(id: 1)) }
        await transport.waitForRequests(1)
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await provider.request(.item(id: 2))
        }
        _ = await cancelled.result
        #expect(await activity.activeCount == 1, "the cancelled request must not end the one in flight")
        transport.release()
        _ = try await inFlight.value
        #expect(await activity.activeCount == 0)
    }

    @Test func retriesBeginAndEndEachAttempt() async throws {
        let activity = NetworkActivityPlugin()
        let provider = Provider<TestAPI>(
            transport: RetryProviderTests.ScriptedTransport([503, 200]), plugins: [activity],
            retryPolicy: RetryPolicy(baseDelay: .zero, jitter: .none))
        #expect(try await provider.request(.validated(0, .successCodes)).statusCode == 200)
        #expect(await activity.activeCount == 0)
    }
}
