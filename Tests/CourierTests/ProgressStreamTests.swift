import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct ProgressStreamTests {
    @Test(arguments: [StubBehavior.immediate, .delayed(.seconds(1))])
    func stubbedRequestYieldsOneCompletedEventAsInMoya(_ behavior: StubBehavior) async throws {
        // Moya's stubbed `requestWithProgress` yields exactly one event: completed, progress 1.0,
        // with the response. The sample body is not reported as a transfer.
        let provider = Provider<TestAPI>(stubClosure: { _ in behavior }, clock: ImmediateClock())
        var events: [ProgressEvent] = []
        for try await event in provider.requestWithProgress(.item(id: 1)) { events.append(event) }
        #expect(events.count == 1)
        #expect(events.first?.isCompleted == true)
        #expect(events.first?.fraction == 1)
        #expect(events.first?.upload == nil && events.first?.download == nil)
        #expect(try events.first?.response?.map(Item.self) == Item(id: 1, name: "Item 1"))
    }

    @Test func stubbedUploadYieldsOneCompletedEvent() async throws {
        let provider = Provider<TestAPI>(stubClosure: Provider.immediatelyStub)
        var events: [ProgressEvent] = []
        for try await event in provider.requestWithProgress(.upload(Data(repeating: 1, count: 100_000))) {
            events.append(event)
        }
        #expect(events.map(\.isCompleted) == [true])
        #expect(events.first?.response != nil)
    }

    @Test func transportProgressBecomesOrderedEventsEndingCompleted() async throws {
        let transport = ScriptedProgressTransport(
            script: [
                .sent(bytes: 2, total: 4), .sent(bytes: 4, total: 4), .responseStarted(expectedLength: 6),
                .received(bytes: 3), .received(bytes: 6),
            ], statusCode: 201, data: Data("done!!".utf8))
        let provider = Provider<TestAPI>(transport: transport)
        var events: [ProgressEvent] = []
        for try await event in provider.requestWithProgress(.upload(Data("body".utf8))) { events.append(event) }
        #expect(events.map(\.fraction) == [0.5, 1, 1, 1, 1, 1])
        #expect(events.filter(\.isCompleted).count == 1)
        #expect(events.last?.isCompleted == true)
        #expect(events.last?.response?.statusCode == 201)
        #expect(events.last?.download == .init(completed: 6, total: 6))
    }

    /// Network transports announce an answer's head, an empty body's too: a 503 without a body,
    /// retried, must not show the download done before the answer that follows has sent a byte.
    @Test func aRetriedAnswerWithoutABodyDoesNotHoldTheFractionAtOne() async throws {
        let provider = Provider<TestAPI>(
            transport: EmptyThenBodyTransport(), clock: ImmediateClock(),
            retryPolicy: RetryPolicy(maxAttempts: 2, jitter: .none))
        var fractions: [Double?] = []
        for try await event in provider.requestWithProgress(.validated(503, .successCodes)) {
            fractions.append(event.fraction)
        }
        #expect(fractions == [nil, 0, 0.5, 1, 1])
    }

    /// A retried answer that had a body (and reached 1) does not hold the fraction at 1 for the
    /// answer that follows: each attempt counts from 0. Found by review.
    @Test func aRetriedAnswerWithABodyDoesNotHoldTheFractionAtOne() async throws {
        let provider = Provider<TestAPI>(
            transport: BodyThenBodyTransport(), clock: ImmediateClock(),
            retryPolicy: RetryPolicy(maxAttempts: 2, jitter: .none))
        var fractions: [Double?] = []
        for try await event in provider.requestWithProgress(.validated(503, .successCodes)) {
            fractions.append(event.fraction)
        }
        #expect(fractions == [0, 1, 0, 0.5, 1, 1])
    }

    /// An earlier attempt still reporting (one whose deadline passed goes on until it sees its
    /// cancel) moves nothing of the attempt counting now. Found by review.
    @Test func anEarlierAttemptsLateReportsAreDropped() async throws {
        let provider = Provider<TestAPI>(
            transport: LateReportingTransport(), clock: ImmediateClock(),
            retryPolicy: RetryPolicy(maxAttempts: 2, jitter: .none))
        var fractions: [Double?] = []
        for try await event in provider.requestWithProgress(.validated(503, .successCodes)) {
            fractions.append(event.fraction)
        }
        #expect(fractions == [0, 1, 0, 0.5, 1, 1])
    }

    @Test func failuresAreThrownFromTheStream() async {
        let provider = Provider<TestAPI>(stubClosure: Provider.immediatelyStub)
        await #expect {
            for try await _ in provider.requestWithProgress(.validated(500, .successCodes)) {}
        } throws: { error in
            (error as? CourierError)?.response?.statusCode == 500
        }
    }

    @Test func breakingOutCancelsTheTransfer() async throws {
        let gated = GatedTransport()
        let provider = Provider<TestAPI>(transport: ScriptedThenGated(gated: gated))
        for try await event in provider.requestWithProgress(.plain) {
            #expect(!event.isCompleted)
            break
        }
        await gated.waitForCancellations(1)
    }

    @Test func cancellingTheConsumerCancelsTheTransfer() async throws {
        let gated = GatedTransport()
        let provider = Provider<TestAPI>(transport: gated)
        let consumer = Task {
            for try await _ in provider.requestWithProgress(.plain) {}
        }
        await gated.waitForRequests(1)
        consumer.cancel()
        _ = await consumer.result
        await gated.waitForCancellations(1)
    }

    @Test func droppingTheStreamCancelsTheTransfer() async {
        let gated = GatedTransport()
        let provider = Provider<TestAPI>(transport: gated)
        do {
            _ = provider.requestWithProgress(.plain)
        }
        #expect(await eventually { gated.cancellations == 1 || gated.calls == 0 })
        #expect(gated.calls == gated.cancellations)
    }

    /// Reports one progress step, then waits at the gate.
    struct ScriptedThenGated: Transport {
        let gated: GatedTransport
        func send(_ transfer: Transfer) async throws -> Response {
            transfer.progress?(.responseStarted(expectedLength: 10))
            return try await gated.send(transfer.request)
        }
    }
}

/// The first attempt a 503 without a body (its head announced, as the network transports do),
/// then a body of 4 bytes.
private struct EmptyThenBodyTransport: Transport {
    let attempts = Locked(0)

    func send(_ transfer: Transfer) async throws -> Response {
        let attempt = attempts.withLock { attempts in
            attempts += 1
            return attempts
        }
        if attempt == 1 {
            transfer.progress?(.responseStarted(expectedLength: 0))
            return Response(statusCode: 503, data: Data(), request: transfer.request)
        }
        transfer.progress?(.responseStarted(expectedLength: 4))
        transfer.progress?(.received(bytes: 2))
        transfer.progress?(.received(bytes: 4))
        return Response(statusCode: 200, data: Data("done".utf8), request: transfer.request)
    }
}

/// Answers a 503 with a body first, then the body the test waits for.
private struct BodyThenBodyTransport: Transport {
    let attempts = Locked(0)

    func send(_ transfer: Transfer) async throws -> Response {
        let attempt = attempts.withLock { attempts in
            attempts += 1
            return attempts
        }
        transfer.progress?(.responseStarted(expectedLength: 4))
        if attempt == 1 {
            transfer.progress?(.received(bytes: 4))
            return Response(statusCode: 503, data: Data("busy".utf8), request: transfer.request)
        }
        transfer.progress?(.received(bytes: 2))
        transfer.progress?(.received(bytes: 4))
        return Response(statusCode: 200, data: Data("done".utf8), request: transfer.request)
    }
}

/// Answers 503 with a body, then 200; the second attempt reports through the first attempt's
/// progress too, as an attempt left running would.
private struct LateReportingTransport: Transport {
    let first = Locked<(@Sendable (TransferProgress) -> Void)?>(nil)

    func send(_ transfer: Transfer) async throws -> Response {
        transfer.progress?(.responseStarted(expectedLength: 4))
        guard let late = first.withLock({ $0 }) else {
            first.withLock { $0 = transfer.progress }
            transfer.progress?(.received(bytes: 4))
            return Response(statusCode: 503, data: Data("busy".utf8), request: transfer.request)
        }
        transfer.progress?(.received(bytes: 2))
        late(.received(bytes: 4))
        late(.responseStarted(expectedLength: 100))
        transfer.progress?(.received(bytes: 4))
        return Response(statusCode: 200, data: Data("done".utf8), request: transfer.request)
    }
}
