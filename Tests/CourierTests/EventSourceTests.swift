import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct EventSourceTests {
    @Test func reconnectsWithTheLastEventIDAfterTheRetryTheServerAskedFor() async throws {
        let clock = TestClock()
        let transport = ScriptedStreamTransport([
            .init(status: 200, chunks: ["retry: 2000\nid: 7\ndata: a\n\n"]),
            .init(status: 200, chunks: ["data: b\n\n"]),
            .init(status: 204),
        ])
        let provider = Provider<StreamTarget>(transport: transport, clock: clock)
        let (arrivals, signal) = AsyncStream.makeStream(of: ServerSentEvent.self)
        let reader = Task {
            for try await event in provider.eventSource(StreamTarget()) { signal.yield(event) }
            signal.finish()
        }
        var events = arrivals.makeAsyncIterator()
        #expect(await events.next() == ServerSentEvent(id: "7", data: "a", retry: .milliseconds(2000)))
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(2000))
        #expect(await events.next() == ServerSentEvent(id: "7", data: "b"))
        // The second connection ended quickly too: the wait doubles (see EventSourceReconnectionTests).
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(3999))
        #expect(transport.attempts == 2)
        clock.advance(by: .milliseconds(1))
        #expect(await events.next() == nil)
        try await reader.value
        #expect(transport.attempts == 3)
        #expect(transport.requests.map { $0.value(forHTTPHeaderField: "Last-Event-ID") } == [nil, "7", "7"])
    }

    @Test func aRefusedStatusEndsIt() async throws {
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["data: a\n\n"]), .init(status: 500)])
        let provider = Provider<StreamTarget>(transport: transport, clock: ImmediateClock())
        var received: [String] = []
        await #expect {
            for try await event in provider.eventSource(StreamTarget(), reconnectionTime: .zero) {
                received.append(event.data)
            }
        } throws: { error in
            if case CourierError.statusCode(let response) = error { return response.statusCode == 500 }
            return false
        }
        #expect(received == ["a"])
    }

    @Test func itGivesUpAfterMaxReconnectsWithoutAnEvent() async throws {
        let transport = ScriptedStreamTransport([.init(status: 0, error: URLError(.networkConnectionLost))])
        let provider = Provider<StreamTarget>(transport: transport, clock: ImmediateClock())
        await #expect(throws: CourierError.self) {
            for try await _ in provider.eventSource(StreamTarget(), reconnectionTime: .zero, maxReconnects: 2) {}
        }
        #expect(transport.attempts == 3)
    }

    /// A connection whose retries (the target's retry policy, before the head) ran out is
    /// reconnected like one that failed without a policy. Found by review.
    @Test func aConnectionWhoseRetriesRanOutIsReconnected() async throws {
        let transport = ScriptedStreamTransport([
            .init(status: 0, error: URLError(.cannotConnectToHost)),
            .init(status: 0, error: URLError(.cannotConnectToHost)),
            .init(status: 200, chunks: ["data: a\n\n"]),
            .init(status: 204),
        ])
        var target = StreamTarget()
        target.retryPolicy = RetryPolicy(maxAttempts: 2, jitter: .none)
        let provider = Provider<StreamTarget>(transport: transport, clock: ImmediateClock())
        var received: [String] = []
        for try await event in provider.eventSource(target, reconnectionTime: .zero) { received.append(event.data) }
        #expect(received == ["a"])
        #expect(transport.attempts == 4)
    }
}
