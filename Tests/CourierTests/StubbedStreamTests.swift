import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct StubbedStreamTests {
    struct Feed: TargetType {
        var headers: [String: String] { [:] }
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "feed" }
        var sampleResponse: SampleResponse {
            .events(
                [ServerSentEvent(id: "1", data: "one"), ServerSentEvent(id: "2", event: "tick", data: "two\nlines")],
                interval: .seconds(1))
        }
    }

    /// A refused stream whose error body arrives slowly.
    struct RefusedFeed: TargetType {
        var validation: ValidationType { .successCodes }
        var headers: [String: String] { [:] }
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "feed" }
        var sampleResponse: SampleResponse {
            .stream(statusCode: 503, chunks: [Data("busy".utf8), Data(", try later".utf8)], interval: .seconds(1))
        }
    }

    /// Cancelled while the refused status's body is read: the call ends as cancelled, as at every
    /// other stage. It ended with `.statusCode` and half a body.
    @Test func aCallCancelledWhileItsErrorBodyIsReadIsCancelled() async throws {
        let clock = TestClock()
        let provider = Provider<RefusedFeed>(stubClosure: Provider.immediatelyStub, clock: clock)
        let call = Task { try await provider.stream(RefusedFeed()) }
        await clock.waitForSleepers(1)
        call.cancel()
        await #expect {
            _ = try await call.value
        } throws: { error in
            (error as? CourierError)?.isCancellation == true
        }
    }

    /// Not cancelled: the same call ends with the status and the whole body, on the clock.
    @Test func aRefusedStreamCarriesItsErrorBody() async throws {
        let clock = TestClock()
        let provider = Provider<RefusedFeed>(stubClosure: Provider.immediatelyStub, clock: clock)
        let call = Task { try await provider.stream(RefusedFeed()) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await #expect {
            _ = try await call.value
        } throws: { error in
            guard case .statusCode(let response) = error as? CourierError else { return false }
            return response.statusCode == 503 && response.data == Data("busy, try later".utf8)
        }
    }

    @Test func sampleEventsArriveOnTheProvidersClock() async throws {
        let clock = TestClock()
        let provider = Provider<Feed>(stubClosure: Provider.immediatelyStub, clock: clock)
        let stream = try await provider.stream(Feed())
        #expect(stream.response?.value(forHTTPHeaderField: "Content-Type") == "text/event-stream")
        let (arrivals, signal) = AsyncStream.makeStream(of: ServerSentEvent.self)
        let reader = Task {
            for try await event in stream.events { signal.yield(event) }
            signal.finish()
        }
        var events = arrivals.makeAsyncIterator()
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(await events.next() == ServerSentEvent(id: "1", data: "one"))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(await events.next() == ServerSentEvent(id: "2", event: "tick", data: "two\nlines"))
        #expect(await events.next() == nil)
        try await reader.value
    }

    @Test func aPlainRequestGetsTheChunksJoined() async throws {
        let provider = Provider<Feed>(stubClosure: Provider.immediatelyStub)
        let response = try await provider.request(Feed())
        #expect(
            String(decoding: response.data, as: UTF8.self)
                == "id: 1\ndata: one\n\nid: 2\nevent: tick\ndata: two\ndata: lines\n\n")
    }

    @Test func stubTransportStreamsItsAnswerOnItsClock() async throws {
        let clock = TestClock()
        let transport = StubTransport(clock: clock).on(
            .get, "feed", .stream([Data("a\n".utf8), Data("b\n".utf8)], interval: .milliseconds(100)))
        let provider = Provider<Feed>(transport: transport)
        let stream = try await provider.stream(Feed())
        let reader = Task {
            var lines: [String] = []
            for try await line in stream.lines { lines.append(line) }
            return lines
        }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(100))
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(100))
        #expect(try await reader.value == ["a", "b"])
        #expect(transport.requests.count == 1)
    }

    /// A stream has no total limit, only its backlog (``Limits/maxStreamBacklogBytes``): the
    /// network's stream, a `.stream` sample and `StubTransport` hand over a body larger than
    /// ``Limits/maxResponseBytes``. A stream call on a whole sample (`.networkResponse`,
    /// `.response`) failed with `limitExceeded(.responseBody)` instead: the stub refused what the
    /// network answers.
    @Test func aStreamCallOnAWholeSampleHasNoTotalLimitAsOnTheNetwork() async throws {
        struct Whole: TargetType {
            let sample: SampleResponse
            var headers: [String: String] { [:] }
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "whole" }
            var sampleResponse: SampleResponse { sample }
            var limits: Limits? { Limits(maxResponseBytes: 10) }
        }
        let body = Data(repeating: 0x61, count: 100)
        let url = try #require(URL(string: "https://api.example.com/whole"))
        let head = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: [:]))
        for sample in [
            SampleResponse.networkResponse(200, body), .response(head, body), .stream(chunks: [body]),
        ] {
            for behavior in [StubBehavior.immediate, .delayed(.zero)] {
                let provider = Provider<Whole>(stubClosure: { _ in behavior })
                let stream = try await provider.stream(Whole(sample: sample))
                var received = Data()
                for try await chunk in stream.chunks { received.append(chunk) }
                #expect(received == body, "\(sample) \(behavior)")
                // A call that keeps the body in memory still has the limit.
                await #expect(throws: CourierError.self) { try await provider.request(Whole(sample: sample)) }
            }
        }
    }

    @Test(arguments: [
        ServerSentEvent(data: "x"),
        ServerSentEvent(id: "7", event: "update", data: "a\nb\n", retry: .milliseconds(2500)),
        ServerSentEvent(id: "", data: ""), ServerSentEvent(data: "  spaced"),
    ])
    func encodedEventsParseBack(event: ServerSentEvent) throws {
        #expect(try StreamParsingTests.events([event.encoded()]) == [event])
    }
}
