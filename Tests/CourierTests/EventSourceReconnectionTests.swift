import CourierTesting
import Foundation
import Testing

@testable import Courier

/// An event source that cannot storm: the wait has a floor, grows while connections keep failing,
/// and a bound that a server sending one event per connection cannot reset. The state machine
/// alone, then through a provider with scripted servers, on a clock that records every wait.
@Suite struct EventSourceReconnectionTests {
    typealias Reconnection = EventSourceReconnection

    static func seconds(_ count: Int) -> Duration { .seconds(count) }

    // MARK: The state machine

    @Test func theWaitHasAFloorAndDoublesWhileConnectionsFail() {
        var machine = Reconnection(reconnectionTime: .zero, minimumWait: .seconds(1), maxReconnects: 10)
        var waits: [Duration] = []
        for _ in 0..<10 {
            guard case .reconnect(let wait) = machine.connectionEnded(lasted: .zero, events: 0) else {
                Issue.record("gave up early")
                return
            }
            waits.append(wait)
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60].map(Self.seconds))
        #expect(machine.connectionEnded(lasted: .zero, events: 0) == .giveUp)
    }

    /// Failed: too short, at most one event, or no head at all. Established: it lasted and
    /// delivered events, or it lasted five minutes (a quiet feed behind a proxy that closes idle
    /// connections); that resets the count and the back-off.
    @Test(arguments: [
        (Duration?.some(.seconds(9)), 50, false),
        (.some(.seconds(10)), 1, false),
        (.some(.seconds(299)), 0, false),
        (nil, 0, false),
        (.some(.seconds(10)), 2, true),
        (.some(.seconds(3600)), 100, true),
        (.some(.seconds(300)), 0, true),
        (.some(.seconds(3600)), 0, true),
    ])
    func whatCountsAsAnEstablishedConnection(lasted: Duration?, events: Int, established: Bool) {
        var machine = Reconnection(reconnectionTime: .seconds(3), minimumWait: .seconds(1), maxReconnects: 10)
        for _ in 0..<3 { _ = machine.connectionEnded(lasted: .zero, events: 0) }
        #expect(machine.failures == 3)
        _ = machine.connectionEnded(lasted: lasted, events: events)
        #expect(machine.failures == (established ? 0 : 4))
        #expect(machine.wait == (established ? .seconds(3) : .seconds(24)))
    }

    @Test func theServersRetryIsKeptAboveTheFloorAndALongOneIsNotCapped() {
        var machine = Reconnection(reconnectionTime: .seconds(3), minimumWait: .seconds(1), maxReconnects: nil)
        machine.reconnectionTime = .milliseconds(10)
        #expect(machine.connectionEnded(lasted: .zero, events: 0) == .reconnect(after: .seconds(1)))
        machine.reconnectionTime = .seconds(600)
        #expect(machine.connectionEnded(lasted: .zero, events: 0) == .reconnect(after: .seconds(600)))
        // No bound: it never gives up, and the largest retry a stream can send never overflows.
        machine.reconnectionTime = .milliseconds(Int64.max)
        for _ in 0..<100 {
            #expect(machine.connectionEnded(lasted: .zero, events: 0) == .reconnect(after: .milliseconds(Int64.max)))
        }
    }

    @Test func aFloorTheUserLowersIsKeptAndANegativeOneIsZero() {
        var lowered = Reconnection(reconnectionTime: .zero, minimumWait: .milliseconds(100), maxReconnects: 3)
        #expect(lowered.connectionEnded(lasted: .zero, events: 0) == .reconnect(after: .milliseconds(100)))
        #expect(lowered.connectionEnded(lasted: .zero, events: 0) == .reconnect(after: .milliseconds(200)))
        var negative = Reconnection(reconnectionTime: .seconds(-5), minimumWait: .seconds(-1), maxReconnects: -2)
        #expect(negative.connectionEnded(lasted: .zero, events: 0) == .giveUp)
        #expect(negative.wait == .zero)
    }

    /// A caller's zero floor, a server's `retry: 0` and no bound: the waits still grow to the
    /// cap instead of staying at zero (they all were zero: a reconnection storm without end).
    @Test(arguments: [Duration.zero, .nanoseconds(1), .seconds(-3)])
    func aZeroFloorStillBacksOffToTheCap(floor: Duration) {
        var machine = Reconnection(reconnectionTime: .zero, minimumWait: floor, maxReconnects: nil)
        var waits: [Duration] = []
        for _ in 0..<12 {
            guard case .reconnect(let wait) = machine.connectionEnded(lasted: .zero, events: 0) else {
                Issue.record("gave up without a bound")
                return
            }
            waits.append(wait)
        }
        #expect(waits[0] == max(floor, .zero))
        #expect(waits[1] >= .milliseconds(100))
        #expect(zip(waits.dropFirst(), waits.dropFirst(2)).allSatisfy { $0 < $1 || $1 == .seconds(60) })
        #expect(waits.last == .seconds(60))
    }

    // MARK: Through a provider

    /// A server that answers `retry: 0` and closes at once, forever.
    @Test func aRetryZeroServerGetsABoundedNumberOfReconnectsWithGrowingWaits() async throws {
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["retry: 0\n\n"])])
        let clock = RecordingClock()
        let provider = Provider<StreamTarget>(transport: transport, clock: clock)
        await #expect {
            for try await _ in provider.eventSource(StreamTarget()) {}
        } throws: { error in
            if case CourierError.limitExceeded(.reconnects(limit: 10)) = error { return true }
            return false
        }
        #expect(transport.attempts == 11)
        #expect(clock.sleeps == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60].map(Self.seconds))
    }

    /// One event per connection, then the close: before, every event reset the count, so even
    /// `maxReconnects: 5` let it reconnect thousands of times in 3 s.
    @Test(arguments: [5, 10])
    func aServerSendingOneEventPerConnectionCannotResetTheBound(maxReconnects: Int) async throws {
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["retry: 0\nid: 1\ndata: x\n\n"])])
        let clock = RecordingClock()
        let provider = Provider<StreamTarget>(transport: transport, clock: clock)
        var received = 0
        await #expect {
            for try await _ in provider.eventSource(StreamTarget(), maxReconnects: maxReconnects) { received += 1 }
        } throws: { error in
            if case CourierError.limitExceeded(.reconnects(let limit)) = error { return limit == maxReconnects }
            return false
        }
        #expect(transport.attempts == maxReconnects + 1)
        #expect(received == maxReconnects + 1)
        #expect(clock.sleeps.count == maxReconnects)
        #expect(clock.sleeps.allSatisfy { $0 >= .seconds(1) })
        #expect(clock.sleeps == clock.sleeps.sorted())
    }

    /// A connection that lasts and delivers events resets the back-off: the next wait is the
    /// reconnection time again.
    @Test func anEstablishedConnectionResetsTheBackOff() async throws {
        let clock = TestClock()
        let transport = ScriptedStreamTransport([
            .init(status: 200, chunks: ["data: quick\n\n"]),
            .init(status: 200, chunks: ["data: a\n\n", "data: b\n\n"], finished: false),
            .init(status: 204),
        ])
        let provider = Provider<StreamTarget>(transport: transport, clock: clock)
        let (arrivals, signal) = AsyncStream.makeStream(of: String.self)
        let reader = Task {
            for try await event in provider.eventSource(StreamTarget(), reconnectionTime: .seconds(2)) {
                signal.yield(event.data)
            }
            signal.finish()
        }
        var events = arrivals.makeAsyncIterator()
        #expect(await events.next() == "quick")
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        #expect(await events.next() == "a")
        #expect(await events.next() == "b")
        // The second connection stays open for 10 s on the provider's clock, then the server ends it.
        clock.advance(by: .seconds(10))
        transport.writer(1)?.finish()
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(1999))
        #expect(transport.attempts == 2)
        clock.advance(by: .milliseconds(1))
        #expect(await events.next() == nil)
        try await reader.value
        #expect(transport.attempts == 3)
    }

    // MARK: Event IDs

    /// An `id` with a control character is dropped, as one with NUL is; the event source goes on
    /// and sends the last good ID. Before, it ended for good with `requestMapping`.
    @Test func anIDWithAControlCharacterIsDroppedAndTheSourceGoesOn() async throws {
        let transport = ScriptedStreamTransport([
            .init(status: 200, chunks: ["id: 7\ndata: a\n\n", "id: x\u{1}y\ndata: b\n\n"]),
            .init(status: 200, chunks: ["id: 8\u{7F}\ndata: c\n\n"]),
            .init(status: 204),
        ])
        let provider = Provider<StreamTarget>(transport: transport, clock: ImmediateClock())
        var received: [ServerSentEvent] = []
        for try await event in provider.eventSource(StreamTarget()) { received.append(event) }
        #expect(received.map(\.data) == ["a", "b", "c"])
        #expect(received.map(\.id) == ["7", "7", "7"])
        #expect(transport.requests.map { $0.value(forHTTPHeaderField: "Last-Event-ID") } == [nil, "7", "7"])
    }

    /// An empty last event ID sends no `Last-Event-ID` (WHATWG), also after one was sent.
    @Test func anEmptyLastEventIDSendsNoHeader() async throws {
        let transport = ScriptedStreamTransport([
            .init(status: 200, chunks: ["id: 7\ndata: a\n\n"]),
            .init(status: 200, chunks: ["id\ndata: b\n\n"]),
            .init(status: 200, chunks: ["id:\ndata: c\n\n"]),
            .init(status: 204),
        ])
        let provider = Provider<StreamTarget>(transport: transport, clock: ImmediateClock())
        var received: [String?] = []
        for try await event in provider.eventSource(StreamTarget()) { received.append(event.id) }
        #expect(received == ["7", "", ""])
        #expect(transport.requests.map { $0.value(forHTTPHeaderField: "Last-Event-ID") } == [nil, "7", nil, nil])
    }

    /// The `id` of an event the connection broke off in (no blank line yet) is not sent back: the
    /// server would resume after an event the reader never got. Found by review.
    @Test func theIDOfAnEventThatNeverEndedIsNotSentBack() async throws {
        let transport = ScriptedStreamTransport([
            .init(status: 200, chunks: ["id: 7\ndata: a\n\n", "id: 8\ndata: b"]),
            .init(status: 200, chunks: ["id: 8\ndata: b\n\n"]),
            .init(status: 204),
        ])
        let provider = Provider<StreamTarget>(transport: transport, clock: ImmediateClock())
        var received: [ServerSentEvent] = []
        for try await event in provider.eventSource(StreamTarget()) { received.append(event) }
        #expect(received.map(\.data) == ["a", "b"])
        #expect(received.map(\.id) == ["7", "8"])
        #expect(transport.requests.map { $0.value(forHTTPHeaderField: "Last-Event-ID") } == [nil, "7", "8"])
    }
}
