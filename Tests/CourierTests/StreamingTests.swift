import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport whose streamed answers are scripted per attempt: a status, chunks written at once,
/// and whether the body ends. The writers stay reachable, so a test can write more later, and
/// each records whether its reader went away (the transfer was stopped).
final class ScriptedStreamTransport: Transport {
    struct Answer: Sendable {
        var status: Int
        var chunks: [String] = []
        var finished = true
        /// Fails the attempt before any head, as a dropped connection does.
        var error: URLError?
    }

    private let script: [Answer]
    private let state = Locked<(attempts: Int, writers: [ResponseBody.Writer], stopped: Set<Int>)>((0, [], []))

    init(_ script: [Answer]) {
        self.script = script
    }

    private let sent = Locked<[URLRequest]>([])
    var requests: [URLRequest] { sent.withLock { $0 } }
    var attempts: Int { state.withLock { $0.attempts } }
    func writer(_ attempt: Int) -> ResponseBody.Writer? {
        state.withLock { attempt < $0.writers.count ? $0.writers[attempt] : nil }
    }
    func stopped(_ attempt: Int) -> Bool { state.withLock { $0.stopped.contains(attempt) } }

    func send(_ transfer: Transfer) async throws -> Response {
        throw CourierError.invalidUse("this transport only streams")
    }

    func stream(_ transfer: Transfer) async throws -> StreamedResponse {
        let attempt = state.withLock { state -> Int in
            defer { state.attempts += 1 }
            return state.attempts
        }
        let answer = script[min(attempt, script.count - 1)]
        sent.withLock { $0.append(transfer.request) }
        if let error = answer.error { throw error }
        let (body, writer) = ResponseBody.makeStream(limits: transfer.limits)
        writer.onTermination { [state] in _ = state.withLock { $0.stopped.insert(attempt) } }
        state.withLock { $0.writers.append(writer) }
        for chunk in answer.chunks { writer.write(Data(chunk.utf8)) }
        if answer.finished { writer.finish() }
        let head = Response(
            statusCode: answer.status, data: Data(), request: transfer.request,
            response: HTTPURLResponse(
                url: transfer.request.url!, statusCode: answer.status, httpVersion: "HTTP/1.1", headerFields: nil))
        return StreamedResponse(head: head, body: body)
    }
}

struct StreamTarget: TargetType {
    var headers: [String: String] { [:] }
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String = "events"
    var validation: ValidationType = .successCodes
    var sampleData: Data = Data()
    var limits: Limits? = nil
    var retryPolicy: RetryPolicy? = nil
}

@Suite struct StreamingTests {
    static func collect(_ body: ResponseBody) async throws -> [String] {
        var chunks: [String] = []
        for try await chunk in body { chunks.append(String(decoding: chunk, as: UTF8.self)) }
        return chunks
    }

    @Test func chunksArriveInOrderAndTheStreamEnds() async throws {
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["a", "b"], finished: false)])
        let provider = Provider<StreamTarget>(transport: transport)
        let stream = try await provider.stream(StreamTarget())
        #expect(stream.statusCode == 200)
        let writer = try #require(transport.writer(0))
        writer.write(Data("c".utf8))
        writer.finish()
        #expect(try await Self.collect(stream.chunks) == ["a", "b", "c"])
        #expect(!transport.stopped(0))
    }

    @Test func linesSplitAcrossChunks() async throws {
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["one\r", "\ntwo\nthr", "ee"])])
        let stream = try await Provider<StreamTarget>(transport: transport).stream(StreamTarget())
        var lines: [String] = []
        for try await line in stream.lines { lines.append(line) }
        #expect(lines == ["one", "two", "three"])
    }

    @Test func eventsAndJSONUntilTheSentinel() async throws {
        struct Token: Decodable, Equatable { let text: String }
        let body = ["data: {\"text\":\"he\"}\n\n", "data: {\"text\":\"llo\"}\n", "\ndata: [DONE]\n\n"]
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: body, finished: false)])
        let stream = try await Provider<StreamTarget>(transport: transport).stream(StreamTarget())
        var tokens: [Token] = []
        for try await token in stream.decodeEvents(Token.self, until: "[DONE]") { tokens.append(token) }
        #expect(tokens == [Token(text: "he"), Token(text: "llo")])
        // The sentinel ended the stream: the transfer, still open, was stopped.
        #expect(transport.stopped(0))
    }

    @Test func jsonLinesDecode() async throws {
        struct Row: Decodable, Equatable { let id: Int }
        let transport = ScriptedStreamTransport([
            .init(status: 200, chunks: ["{\"id\":1}\n{\"i", "d\":2}\n\n{\"id\":3}"])
        ])
        let stream = try await Provider<StreamTarget>(transport: transport).stream(StreamTarget())
        var rows: [Row] = []
        for try await row in stream.decodeLines(Row.self) { rows.append(row) }
        #expect(rows == [Row(id: 1), Row(id: 2), Row(id: 3)])
    }

    @Test func stubbedTargetsStreamTheirSampleData() async throws {
        var target = StreamTarget()
        target.sampleData = Data("event: greeting\ndata: hi\n\n".utf8)
        let provider = Provider<StreamTarget>(stubClosure: Provider.immediatelyStub)
        var events: [ServerSentEvent] = []
        for try await event in try await provider.stream(target).events { events.append(event) }
        #expect(events == [ServerSentEvent(event: "greeting", data: "hi")])
    }

    @Test func aRefusedStatusThrowsWithTheStartOfItsBody() async throws {
        let transport = ScriptedStreamTransport([
            .init(status: 500, chunks: ["0123456789", "abcdefghij"], finished: false)
        ])
        var target = StreamTarget()
        target.limits = Limits(maxErrorBodyBytes: 15)
        let provider = Provider<StreamTarget>(transport: transport)
        await #expect {
            try await provider.stream(target)
        } throws: { error in
            guard case CourierError.statusCode(let response) = error else { return false }
            return response.statusCode == 500 && String(decoding: response.data, as: UTF8.self) == "0123456789abcde"
        }
        #expect(transport.stopped(0))
    }

    /// A refused status whose body stalls: its start is read within the stream's idle timeout
    /// (before, the call waited for the server to close, whatever `idleTimeout` said; an event
    /// source with an idle timeout hung on a `503` that never finished its body).
    @Test(.timeLimit(.minutes(1)))
    func aRefusedStatusWhoseBodyStallsEndsOnTheIdleTimeout() async throws {
        let clock = TestClock()
        let transport = ScriptedStreamTransport([.init(status: 503, chunks: ["busy"], finished: false)])
        let provider = Provider<StreamTarget>(transport: transport, clock: clock)
        let call = Task { try await provider.stream(StreamTarget(), idleTimeout: .seconds(5)) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        await #expect {
            try await call.value
        } throws: { error in
            guard case CourierError.statusCode(let response) = error else { return false }
            return response.statusCode == 503 && String(decoding: response.data, as: UTF8.self) == "busy"
        }
        #expect(transport.stopped(0))
    }

    /// ... and within the attempt's deadline, which covered only the head before.
    @Test(.timeLimit(.minutes(1)))
    func aRefusedStatusWhoseBodyStallsEndsOnTheDeadline() async throws {
        let clock = TestClock()
        let transport = ScriptedStreamTransport([.init(status: 503, chunks: ["busy"], finished: false)])
        let provider = Provider<StreamTarget>(transport: transport, clock: clock, timeout: .seconds(5))
        let call = Task { try await provider.stream(StreamTarget()) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        await #expect {
            try await call.value
        } throws: { error in
            guard case CourierError.timedOut = error else { return false }
            return true
        }
        // The caller is answered at the deadline; the stages, cancelled then, stop the body on
        // their own task, which a loaded machine may run a moment later.
        #expect(await eventually { transport.stopped(0) })
    }

    @Test func retriesHappenBeforeTheHeadIsHandedOver() async throws {
        let transport = ScriptedStreamTransport([
            .init(status: 503, chunks: ["busy"]), .init(status: 200, chunks: ["data: ok\n\n"]),
        ])
        var target = StreamTarget()
        target.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: .zero, jitter: .none)
        let stream = try await Provider<StreamTarget>(transport: transport).stream(target)
        var events: [ServerSentEvent] = []
        for try await event in stream.events { events.append(event) }
        #expect(transport.attempts == 2)
        #expect(events.map(\.data) == ["ok"])
    }

    @Test func leavingTheLoopEarlyStopsTheTransfer() async throws {
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["a", "b"], finished: false)])
        let stream = try await Provider<StreamTarget>(transport: transport).stream(StreamTarget())
        for try await _ in stream.chunks { break }
        #expect(transport.stopped(0))
    }

    @Test func droppingAStreamUnreadStopsTheTransfer() async throws {
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["a"], finished: false)])
        let provider = Provider<StreamTarget>(transport: transport)
        do {
            let stream = try await provider.stream(StreamTarget())
            #expect(stream.statusCode == 200)
        }
        #expect(transport.stopped(0))
    }

    @Test func cancellingTheReaderThrowsCancelledAndStopsTheTransfer() async throws {
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["a"], finished: false)])
        let stream = try await Provider<StreamTarget>(transport: transport).stream(StreamTarget())
        let (firstChunk, signal) = AsyncStream.makeStream(of: Void.self)
        let reader = Task {
            for try await _ in stream.chunks { signal.yield() }
        }
        var signals = firstChunk.makeAsyncIterator()
        _ = await signals.next()
        reader.cancel()
        let result = await reader.result
        #expect((result.failure as? CourierError)?.isCancellation == true)
        #expect(transport.stopped(0))
    }

    @Test func anIdleStreamTimesOutOnTheProvidersClock() async throws {
        let clock = TestClock()
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: [], finished: false)])
        let provider = Provider<StreamTarget>(transport: transport, clock: clock)
        let stream = try await provider.stream(StreamTarget(), idleTimeout: .seconds(5))
        let reader = Task { try await Self.collect(stream.chunks) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        let result = await reader.result
        guard case .failure(CourierError.timedOut) = result.mapError({ $0 as? CourierError ?? .cancelled }) else {
            Issue.record("expected timedOut, got \(result)")
            return
        }
        #expect(transport.stopped(0))
    }

    @Test func streamsAreNeverShared() async throws {
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["a"])])
        let provider = Provider<StreamTarget>(transport: transport, deduplication: .enabled)
        async let first = provider.stream(StreamTarget())
        async let second = provider.stream(StreamTarget())
        let streams = try await [first, second]
        #expect(transport.attempts == 2)
        for stream in streams { #expect(try await Self.collect(stream.chunks) == ["a"]) }
    }

    @Test func aSecondReaderIsRefused() async throws {
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["a"])])
        let stream = try await Provider<StreamTarget>(transport: transport).stream(StreamTarget())
        var first = stream.chunks.makeAsyncIterator()
        var second = stream.lines.makeAsyncIterator()
        await #expect {
            try await second.next()
        } throws: { error in
            if case CourierError.invalidUse = error { return true }
            return false
        }
        #expect(try await first.next() == Data("a".utf8))
    }

    @Test func pluginsSeeTheHeadThenTheEnd() async throws {
        let finished = EventLog()
        let (ended, signal) = AsyncStream.makeStream(of: Void.self)
        struct FinishPlugin: Plugin {
            let log: EventLog
            let signal: AsyncStream<Void>.Continuation
            func didFinish(
                _ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext
            )
                async
            {
                switch result {
                case .success(let response): log.append("success \(response.statusCode)")
                case .failure(let error): log.append("failure \(error)")
                }
                signal.yield()
            }
        }
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["a"], finished: false)])
        let provider = Provider<StreamTarget>(
            transport: transport, plugins: [FinishPlugin(log: finished, signal: signal)])
        let stream = try await provider.stream(StreamTarget())
        #expect(finished.all.isEmpty)
        transport.writer(0)?.finish()
        _ = try await Self.collect(stream.chunks)
        var iterator = ended.makeAsyncIterator()
        _ = await iterator.next()
        #expect(finished.all == ["success 200"])
    }

    /// A reader that leaves a body the server had finished, its last chunks unread (by leaving the
    /// loop, or cancelled), ends the call cancelled for the plugins too, not as a success. Found
    /// by review.
    @Test(arguments: [false, true]) func leavingAFinishedBodyEarlyEndsTheCallCancelled(cancelling: Bool) async throws {
        let (ends, signal) = AsyncStream.makeStream(of: Result<Response, CourierError>.self)
        struct Finish: Plugin {
            let signal: AsyncStream<Result<Response, CourierError>>.Continuation
            func didFinish(
                _ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext
            ) async {
                signal.yield(result)
            }
        }
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["a", "b"], finished: true)])
        let provider = Provider<StreamTarget>(transport: transport, plugins: [Finish(signal: signal)])
        let stream = try await provider.stream(StreamTarget())
        if cancelling {
            let reader = Task {
                var chunks = stream.chunks.makeAsyncIterator()
                _ = try await chunks.next()
                withUnsafeCurrentTask { $0?.cancel() }
                _ = try await chunks.next()
            }
            await #expect(throws: CourierError.self) { try await reader.value }
        } else {
            for try await _ in stream.chunks { break }
        }
        var iterator = ends.makeAsyncIterator()
        let result = await iterator.next()
        #expect(result?.failure?.isCancellation == true, "\(String(describing: result))")
    }

    /// Records `didFinish` without signalling: the test reads the log right after the body ends.
    struct FinishLog: Plugin {
        let log: EventLog
        func didFinish(
            _ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext
        )
            async
        {
            switch result {
            case .success(let response): log.append("success \(response.statusCode)")
            case .failure(let error): log.append("failure \(error)")
            }
        }
    }

    @Test func didFinishRunsAsPartOfTheCallBeforeTheReaderSeesTheEnd() async throws {
        // It ran on a detached task before: the reader could see the end first.
        let finished = EventLog()
        let transport = ScriptedStreamTransport([
            .init(status: 200, chunks: ["a"], finished: false),
            .init(status: 200, chunks: ["b"], finished: false),
        ])
        let provider = Provider<StreamTarget>(transport: transport, plugins: [FinishLog(log: finished)])
        let stream = try await provider.stream(StreamTarget())
        transport.writer(0)?.finish()
        _ = try await Self.collect(stream.chunks)
        #expect(finished.all == ["success 200"])

        let failing = try await provider.stream(StreamTarget())
        transport.writer(1)?.finish(throwing: URLError(.networkConnectionLost))
        await #expect(throws: CourierError.self) { try await Self.collect(failing.chunks) }
        #expect(finished.all.count == 2)
        #expect(finished.all.last?.hasPrefix("failure") == true)
    }

    /// Found by review: a line over the limit, a value that did not decode, or the `[DONE]`
    /// sentinel ended the call `cancelled` for plugins (when the iterator went), after the reader
    /// had its answer, and a line reader went on with an empty line after the limit. The call ends
    /// with the reader's outcome now, before the reader gets it, and the transfer stops.
    @Test func aReadersOwnEndIsTheCallsEnd() async throws {
        struct Value: Decodable, Sendable { var n: Int }
        let finished = EventLog()
        let transport = ScriptedStreamTransport([
            .init(
                status: 200, chunks: ["a\r", "\n" + String(repeating: "x", count: 100) + "\n", "b\n"], finished: false),
            .init(status: 200, chunks: ["data: {\"n\":1}\n\n", "data: [DONE]\n\n"], finished: false),
            .init(status: 200, chunks: ["{\"n\":1}\n", "not json\n"], finished: false),
            .init(status: 200, chunks: ["data: " + String(repeating: "y", count: 100) + "\n"], finished: false),
        ])
        let provider = Provider<StreamTarget>(transport: transport, plugins: [FinishLog(log: finished)])
        let limited = StreamTarget(limits: Limits(maxLineBytes: 16))

        var lines = try await provider.stream(limited).lines.makeAsyncIterator()
        #expect(try await lines.next() == "a")
        for _ in 0..<3 {
            do throws(CourierError) {
                let line = try await lines.next()
                Issue.record("a line after the limit: \(String(describing: line))")
            } catch {
                guard case .limitExceeded(.line(limit: 16)) = error else {
                    Issue.record("\(error)")
                    continue
                }
            }
        }
        #expect(finished.all == ["failure \(CourierError.limitExceeded(.line(limit: 16)))"])
        #expect(transport.writer(0)?.isTerminated == true)

        var values: [Int] = []
        for try await value in try await provider.stream(StreamTarget()).decodeEvents(Value.self, until: "[DONE]") {
            values.append(value.n)
        }
        #expect(values == [1])
        #expect(finished.all.last == "success 200")
        #expect(transport.writer(1)?.isTerminated == true)

        var decoded = try await provider.stream(StreamTarget()).decodeLines(Value.self).makeAsyncIterator()
        #expect(try await decoded.next()?.n == 1)
        await #expect(throws: CourierError.self) { _ = try await decoded.next() }
        #expect(finished.all.count == 3)
        #expect(finished.all.last?.hasPrefix("failure") == true)
        #expect(finished.all.last?.contains("cancel") == false)

        var events = try await provider.stream(limited).events.makeAsyncIterator()
        await #expect(throws: CourierError.self) { _ = try await events.next() }
        #expect(finished.all.count == 4)
        #expect(finished.all.last?.contains("limit") == true, "\(finished.all)")
    }
}
