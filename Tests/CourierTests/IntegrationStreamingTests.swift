import Courier
import Foundation
import Testing

/// Streamed responses over the real transport, against the local httpbin and the fault server.
@Suite(.enabled(if: HTTPBin.isAvailable && FaultServer.isAvailable, "needs scripts/test's servers"))
struct IntegrationStreamingTests {
    let bin = Provider<Bin>()
    let fault = Provider<Fault>()

    @Test func jsonLinesFromHTTPBinStream() async throws {
        struct Line: Decodable { let id: Int }
        let stream = try await bin.stream(Bin(path: "stream/5"))
        var ids: [Int] = []
        for try await line in stream.decodeLines(Line.self) { ids.append(line.id) }
        #expect(ids == [0, 1, 2, 3, 4])
    }

    @Test func dripArrivesWhole() async throws {
        let stream = try await bin.stream(
            Bin(path: "drip", task: .parameters(["numbytes": 8, "duration": 0.2, "delay": 0], encoding: .queryString)))
        var total = 0
        for try await chunk in stream.chunks { total += chunk.count }
        #expect(total == 8)
    }

    @Test func streamBytesArriveInChunks() async throws {
        let stream = try await bin.stream(
            Bin(
                path: "stream-bytes/100000", task: .parameters(["chunk_size": 4096, "seed": 7], encoding: .queryString))
        )
        var total = 0
        var chunks = 0
        for try await chunk in stream.chunks {
            total += chunk.count
            chunks += 1
        }
        #expect(total == 100_000)
        #expect(chunks > 1)
    }

    @Test func aRefusedStatusThrowsBeforeTheBody() async throws {
        var target = Bin(path: "status/503")
        target.validation = .successCodes
        await #expect {
            try await bin.stream(target)
        } throws: { error in
            guard case CourierError.statusCode(let response) = error else { return false }
            return response.statusCode == 503
        }
    }

    @Test func serverSentEventsSplitAnywhere() async throws {
        let stream = try await fault.stream(.patient("sse"))
        #expect(stream.response?.value(forHTTPHeaderField: "Content-Type") == "text/event-stream")
        var events: [ServerSentEvent] = []
        for try await event in stream.events { events.append(event) }
        #expect(
            events == [
                ServerSentEvent(id: "1", data: "first", retry: .milliseconds(1500)),
                ServerSentEvent(id: "1", event: "update", data: #"{"n":2}"#),
            ])
    }

    @Test func aDroppedConnectionEndsTheEventsWithAnError() async throws {
        let stream = try await fault.stream(.patient("sse-drop"))
        var events: [ServerSentEvent] = []
        await #expect(throws: CourierError.self) {
            for try await event in stream.events { events.append(event) }
        }
        #expect(events.map(\.data) == ["first", #"{"n":2}"#])
    }

    @Test func anEventSourceReconnectsAfterTheServerCloses() async throws {
        // The server's stream ends after two events and asks for 1.5 s before reconnecting.
        var events: [ServerSentEvent] = []
        for try await event in fault.eventSource(.patient("sse"), maxReconnects: 3) {
            events.append(event)
            if events.count == 3 { break }
        }
        #expect(events.map(\.data) == ["first", #"{"n":2}"#, "first"])
        #expect(events.map(\.id) == ["1", "1", "1"])
    }

    @Test func leavingTheLoopClosesTheConnection() async throws {
        let id = UUID().uuidString
        let stream = try await fault.stream(.patient("stream-watch", id: id))
        var seen = 0
        for try await _ in stream.chunks {
            seen += 1
            if seen == 2 { break }
        }
        // The server notices the closed connection at its next write (every 10 ms) and keeps
        // writing for two minutes otherwise; ask it, each question waiting up to 10 s for the end.
        struct Watch: Decodable {
            let closed: Bool
            let state: String
            let writes: Int
        }
        var watch = Watch(closed: false, state: "writing", writes: 0)
        for _ in 0..<12 where watch.state == "writing" {
            watch = try await fault.request(.patient("stream-closed", id: id, wait: 10)).map(Watch.self)
        }
        #expect(watch.closed, "the server's stream ended as \(watch.state) after \(watch.writes) writes")
    }

    @Test func anUnreadStreamHoldsUpNoOtherRequest() async throws {
        let id = UUID().uuidString
        // Opened and not read while the server keeps writing.
        let stream = try await fault.stream(.patient("stream-watch", id: id))
        for _ in 0..<5 {
            #expect(try await fault.request(.patient("ok")).statusCode == 200)
        }
        #expect(stream.statusCode == 200)
    }
}

extension Fault {
    /// A fault-server target for the streaming tests, which check what arrives, not deadlines: under
    /// the sanitizers the whole suite shares the servers and two cores, and a head can take seconds
    /// (one took over 2 s under ThreadSanitizer). `id` names a `/stream-watch` stream.
    /// `wait` is how long `/stream-closed` may wait for the stream to end.
    fileprivate static func patient(_ path: String, id: String? = nil, wait: Int? = nil) -> Fault {
        var target = Fault(path: path)
        if let id { target.task = .parameters(["id": id, "wait": wait], encoding: .queryString) }
        target.timeout = .seconds(60)
        return target
    }
}
