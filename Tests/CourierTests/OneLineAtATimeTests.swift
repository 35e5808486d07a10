import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Lines and events are read from a chunk one line at a time. A chunk was turned into all of its
/// lines before the first was handed over: a whole body of short lines in one chunk (as a transport
/// that buffers hands it over, or a stub) cost some fifty times its size in memory (16 MiB of
/// `a\n`: 1.7 GB peak for `lines`, 2.5 GB for `events`; now what reading its chunks takes), and a
/// line over the limit anywhere in a chunk failed the stream before the lines and events ahead of it
/// in the same chunk were read: they were lost.
@Suite struct OneLineAtATimeTests {
    static func stream(_ body: String, maxLineBytes: Int64 = 16) -> ResponseStream {
        let url = URL(string: "https://api.example.com/feed")!
        let head = Response(statusCode: 200, data: Data(), request: URLRequest(url: url), response: nil)
        return ResponseStream(
            head: head, body: ResponseBody(Data(body.utf8)), limits: Limits(maxLineBytes: maxLineBytes))
    }

    static var tooLong: String { String(repeating: "x", count: 100) }

    @Test func theLinesAheadOfALineOverTheLimitArriveBeforeTheError() async throws {
        var lines = Self.stream("one\r\ntwo\n\n" + Self.tooLong + "\nnever\n").lines.makeAsyncIterator()
        #expect(try await lines.next() == "one")
        #expect(try await lines.next() == "two")
        #expect(try await lines.next() == "")
        await #expect {
            _ = try await lines.next()
        } throws: { error in
            guard case .limitExceeded(.line(limit: 16)) = error as? CourierError else { return false }
            return true
        }
    }

    @Test func theEventsAheadOfALineOverTheLimitArriveBeforeTheError() async throws {
        let body = "id: 1\ndata: a\n\ndata: b\n\ndata: " + Self.tooLong + "\n\n"
        var events = Self.stream(body).events.makeAsyncIterator()
        #expect(try await events.next() == ServerSentEvent(id: "1", data: "a"))
        #expect(try await events.next() == ServerSentEvent(id: "1", data: "b"))
        await #expect(throws: CourierError.self) { _ = try await events.next() }
    }

    /// A chunk that is a slice of a larger `Data` (its indices do not start at zero) and a CR at
    /// its very end, whose LF starts the next chunk.
    @Test func aSlicedChunkAndACRAtItsEnd() async throws {
        let whole = Data("skip|one\ntwo\r".utf8)
        let (body, writer) = ResponseBody.makeStream()
        writer.write(whole[whole.index(whole.startIndex, offsetBy: 5)...])
        writer.write(Data("\nthree".utf8))
        writer.finish()
        let url = URL(string: "https://api.example.com/feed")!
        let head = Response(statusCode: 200, data: Data(), request: URLRequest(url: url), response: nil)
        var lines: [String] = []
        for try await line in ResponseStream(head: head, body: body, limits: .default).lines { lines.append(line) }
        #expect(lines == ["one", "two", "three"])
    }

    /// Many lines in one chunk, each handed over in order, with a last line without an ending;
    /// events likewise, the last without its blank line dropped.
    @Test func aChunkOfManyLinesIsReadWhole() async throws {
        let count = 20_000
        var text = (0..<count).map { "line \($0)" }.joined(separator: "\r\n")
        var read = 0
        for try await line in Self.stream(text, maxLineBytes: 64).lines {
            #expect(line == "line \(read)")
            read += 1
        }
        #expect(read == count)
        text = (0..<count).map { "data: \($0)\n\n" }.joined() + "data: unfinished\n"
        read = 0
        for try await event in Self.stream(text, maxLineBytes: 64).events {
            #expect(event.data == "\(read)")
            read += 1
        }
        #expect(read == count)
    }

    /// A reader cancelled between two lines of one chunk is answered ``CourierError/cancelled`` at
    /// its next read, as between chunks: the rest of the chunk (a whole body, for a stub or a
    /// transport that buffers) was handed over line after line to a task that had been cancelled.
    @Test func aReaderCancelledBetweenTheLinesOfAChunkIsAnsweredCancelled() async throws {
        let text = (0..<1_000).map { "line \($0)" }.joined(separator: "\n")
        let outcome = await Task {
            var lines = Self.stream(text, maxLineBytes: 64).lines.makeAsyncIterator()
            var read: [String] = []
            if let line = try? await lines.next() { read.append(line) }
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(CourierError) {
                while let line = try await lines.next() { read.append(line) }
                return (read, CourierError?.none)
            } catch {
                return (read, error)
            }
        }.value
        #expect(outcome.0.count == 1, "lines read after the cancellation: \(outcome.0.count - 1)")
        guard case .cancelled = outcome.1 else {
            Issue.record("expected .cancelled, got \(String(describing: outcome.1))")
            return
        }
    }

    @Test func anEventReaderCancelledBetweenTheEventsOfAChunkIsAnsweredCancelled() async throws {
        let text = (0..<1_000).map { "data: \($0)\n\n" }.joined()
        let outcome = await Task {
            var events = Self.stream(text, maxLineBytes: 64).events.makeAsyncIterator()
            var read: [String] = []
            if let event = try? await events.next() { read.append(event.data) }
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(CourierError) {
                while let event = try await events.next() { read.append(event.data) }
                return (read, CourierError?.none)
            } catch {
                return (read, error)
            }
        }.value
        #expect(outcome.0.count == 1, "events read after the cancellation: \(outcome.0.count - 1)")
        guard case .cancelled = outcome.1 else {
            Issue.record("expected .cancelled, got \(String(describing: outcome.1))")
            return
        }
    }

    /// A reader that goes on after an event over the limit gets the error again, never the event
    /// without the line that crossed it as if it were whole (it got `"0123456789\nc"`, the
    /// `01234` line dropped), nor the events after it; lines likewise.
    @Test func aReaderThatGoesOnAfterAnEventOverTheLimitGetsTheErrorAgain() async throws {
        // Each line within the limit (16 bytes); the event's data is not: 11 + 6 bytes.
        let body = "data: 0123456789\ndata: 01234\ndata: c\n\ndata: d\n\n"
        var events = Self.stream(body).events.makeAsyncIterator()
        for round in 0..<3 {
            do throws(CourierError) {
                let event = try await events.next()
                Issue.record("read \(round): \(String(describing: event))")
            } catch {
                guard case .limitExceeded(.line(limit: 16)) = error else {
                    Issue.record("read \(round): \(error)")
                    continue
                }
            }
        }
        var lines = Self.stream("a\n" + Self.tooLong + "\nb\n").lines.makeAsyncIterator()
        #expect(try await lines.next() == "a")
        for _ in 0..<3 { await #expect(throws: CourierError.self) { _ = try await lines.next() } }
    }
}
