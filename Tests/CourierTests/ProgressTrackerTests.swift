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

    /// An answer without a body announces 0 bytes at its head; it may be followed by another (a
    /// 503 retried, a 401 after a credential refresh), whose body must move the fraction from 0,
    /// not find it held at 1.
    @Test func anAnswerWithoutABodyLeavesTheFractionToTheNextAnswer() throws {
        var tracker = ProgressTracker(uploadLength: nil)
        let emptyEvent = tracker.handle(.responseStarted(expectedLength: 0))
        let empty = try #require(emptyEvent)
        #expect(empty.download == .init(completed: 0, total: 0))
        #expect(empty.fraction == nil)
        #expect(tracker.handle(.responseStarted(expectedLength: 200))?.fraction == 0)
        #expect(tracker.handle(.received(bytes: 50))?.fraction == 0.25)
        #expect(tracker.finish(with: Response(statusCode: 200, data: Data()))?.fraction == 1)
    }

    /// A resumed download: the bytes already on disk are done from the answer's head on, and the
    /// total is the whole entity.
    @Test func keptBytesAreDoneFromTheHeadOn() throws {
        var tracker = ProgressTracker(uploadLength: nil)
        let headEvent = tracker.handle(.responseStarted(expectedLength: 400), kept: 600)
        let head = try #require(headEvent)
        #expect(head.download == .init(completed: 600, total: 1000))
        #expect(head.fraction == 0.6)
        let bodyEvent = tracker.handle(.received(bytes: 100), kept: 600)
        let body = try #require(bodyEvent)
        #expect(body.download == .init(completed: 700, total: 1000))
        #expect(body.fraction == 0.7)
        // A length the head does not say: the kept bytes are done all the same.
        var unknown = ProgressTracker(uploadLength: nil)
        #expect(
            unknown.handle(.responseStarted(expectedLength: nil), kept: 600)?.download
                == .init(completed: 600, total: nil))
    }

    @Test func emptyTotalCountsAsDone() {
        #expect(ProgressEvent.Bytes(completed: 0, total: 0).fraction == 1)
        #expect(ProgressEvent.Bytes(completed: 3, total: nil).fraction == nil)
    }
}
