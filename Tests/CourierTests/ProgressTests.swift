import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct ProgressTrackerTests {
    @Test func uploadIsTheMainDirectionWhenThereIsABody() throws {
        var tracker = ProgressTracker(uploadLength: 100)
        let firstEvent = tracker.handle(.sent(bytes: 40, total: 100))
        let first = try #require(firstEvent)
        #expect(first.fraction == 0.4)
        #expect(first.upload == .init(completed: 40, total: 100))
        let secondEvent = tracker.handle(.sent(bytes: 100, total: 100))
        let second = try #require(secondEvent)
        #expect(second.fraction == 1)
        // The response does not move the fraction back.
        let startedEvent = tracker.handle(.responseStarted(expectedLength: 1_000))
        let started = try #require(startedEvent)
        #expect(started.fraction == 1)
        let receivedEvent = tracker.handle(.received(bytes: 10))
        let received = try #require(receivedEvent)
        #expect(received.fraction == 1)
        #expect(received.download == .init(completed: 10, total: 1_000))
        #expect(!received.isCompleted)
    }

    @Test func downloadIsTheMainDirectionWithoutABody() throws {
        var tracker = ProgressTracker(uploadLength: nil)
        #expect(tracker.handle(.responseStarted(expectedLength: 200))?.fraction == 0)
        #expect(tracker.handle(.received(bytes: 50))?.fraction == 0.25)
        #expect(tracker.handle(.received(bytes: 200))?.fraction == 1)
        let finalEvent = tracker.finish(with: Response(statusCode: 200, data: Data()))
        let final = try #require(finalEvent)
        #expect(final.isCompleted)
        #expect(final.fraction == 1)
        #expect(final.upload == nil)
    }

    @Test func unknownLengthIsIndeterminate() throws {
        var tracker = ProgressTracker(uploadLength: 0)
        let startedEvent = tracker.handle(.responseStarted(expectedLength: nil))
        let started = try #require(startedEvent)
        #expect(started.isIndeterminate)
        let receivedEvent = tracker.handle(.received(bytes: 4_096))
        let received = try #require(receivedEvent)
        #expect(received.isIndeterminate)
        #expect(received.download == .init(completed: 4_096, total: nil))
    }

    @Test func moreBytesThanAnnouncedDropsTheTotalButKeepsTheFraction() throws {
        var tracker = ProgressTracker(uploadLength: nil)
        _ = tracker.handle(.responseStarted(expectedLength: 100))
        #expect(tracker.handle(.received(bytes: 80))?.fraction == 0.8)
        let overEvent = tracker.handle(.received(bytes: 150))
        let over = try #require(overEvent)
        #expect(over.download?.total == nil)
        #expect(over.fraction == 0.8)
    }

    @Test func fractionsNeverGoBackwards() {
        var tracker = ProgressTracker(uploadLength: 100)
        var fractions: [Double] = []
        for report: TransferProgress in [
            .sent(bytes: 50, total: 100), .sent(bytes: 30, total: 100), .sent(bytes: 60, total: 200),
            .sent(bytes: 90, total: nil), .responseStarted(expectedLength: 10), .received(bytes: 5),
        ] {
            if let fraction = tracker.handle(report)?.fraction { fractions.append(fraction) }
        }
        #expect(fractions == fractions.sorted())
        #expect(fractions.first == 0.5)
    }

    @Test func repeatedReportsAreNotRepublished() {
        var tracker = ProgressTracker(uploadLength: nil)
        _ = tracker.handle(.responseStarted(expectedLength: 10))
        #expect(tracker.handle(.received(bytes: 5)) != nil)
        #expect(tracker.handle(.received(bytes: 5)) == nil)
    }

    @Test func exactlyOneCompletedEventAndNothingAfter() {
        var tracker = ProgressTracker(uploadLength: 10)
        #expect(tracker.finish(with: Response(statusCode: 200, data: Data())) != nil)
        #expect(tracker.finish(with: Response(statusCode: 200, data: Data())) == nil)
        #expect(tracker.handle(.sent(bytes: 10, total: 10)) == nil)
    }

    @Test func emptyTotalCountsAsDone() {
        #expect(ProgressEvent.Bytes(completed: 0, total: 0).fraction == 1)
        #expect(ProgressEvent.Bytes(completed: 3, total: nil).fraction == nil)
    }
}

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
