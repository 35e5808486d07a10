import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A wait of `.seconds(Int64.max)`, a natural way to say "never", on the default
/// `ContinuousClock`: the clock traps on a sleep that ends past `Int64.max` seconds, which crashed
/// the process (the test runner with it) as soon as such a deadline or reconnection wait began.
@Suite struct LongWaitTests {
    static let never = Duration.seconds(Int64.max)

    struct Feed: TargetType {
        var headers: [String: String] { [:] }
        var baseURL: URL { URL(string: "https://feed.example.com")! }
        var path: String { "events" }
        var sampleResponse: SampleResponse { .events([ServerSentEvent(id: "1", data: "one")]) }
    }

    @Test func aTimeoutOfInt64MaxSecondsIsAsGoodAsNever() async throws {
        let provider = Provider<TestAPI>(stubClosure: Provider.immediatelyStub, timeout: Self.never)
        for _ in 0..<20 {
            #expect(try await provider.request(.plain).statusCode == 200)
        }
    }

    @Test func idleAndTotalTimeoutsOfInt64MaxSecondsAreAsGoodAsNever() async throws {
        let provider = Provider<Feed>(stubClosure: Provider.immediatelyStub)
        for _ in 0..<20 {
            let stream = try await provider.stream(Feed(), idleTimeout: Self.never, totalTimeout: Self.never)
            var count = 0
            for try await _ in stream.events { count += 1 }
            #expect(count == 1)
        }
    }

    /// A `ContinuousClock` that says when a sleep begins, so the test cancels a sleeping reader.
    final class AnnouncingClock: Clock, Sendable {
        typealias Instant = ContinuousClock.Instant
        let clock = ContinuousClock()
        let began: AsyncStream<Void>.Continuation
        init(began: AsyncStream<Void>.Continuation) { self.began = began }
        var now: Instant { clock.now }
        var minimumResolution: Duration { clock.minimumResolution }
        // clock-ok: the test cancels this sleep as soon as it is announced; it never runs out.
        func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
            began.yield()
            try await clock.sleep(until: deadline, tolerance: tolerance)  // clock-ok: cancelled
        }
    }

    @Test func aReconnectionTimeOfInt64MaxSecondsWaitsUntilCancelled() async throws {
        let (sleeps, began) = AsyncStream.makeStream(of: Void.self)
        let provider = Provider<Feed>(stubClosure: Provider.immediatelyStub, clock: AnnouncingClock(began: began))
        let reader = Task {
            for try await _ in provider.eventSource(
                Feed(), reconnectionTime: Self.never, minimumReconnectionTime: Self.never)
            {}
        }
        var sleeping = sleeps.makeAsyncIterator()
        _ = await sleeping.next()
        reader.cancel()
        await #expect {
            try await reader.value
        } throws: { error in
            (error as? CourierError)?.isCancellation == true
        }
    }

    /// CourierTesting's `StubTransport` cuts its waits as Courier does: an answer delayed by
    /// `.seconds(Int64.max)` waits until cancelled instead of trapping in the clock. Found by review.
    @Test func aStubDelayOfInt64MaxSecondsWaitsUntilCancelled() async throws {
        let (sleeps, began) = AsyncStream.makeStream(of: Void.self)
        let transport = StubTransport(clock: AnnouncingClock(began: began))
            .on(nil, "**", StubAnswer.status(200).delayed(by: Self.never))
        let call = Task { try await transport.send(URLRequest(url: URL(string: "https://feed.example.com/events")!)) }
        var sleeping = sleeps.makeAsyncIterator()
        _ = await sleeping.next()
        call.cancel()
        await #expect(throws: (any Error).self) { try await call.value }
    }
}
