import Courier
import Foundation
import Testing

/// Streamed responses over the real transport, against the local httpbin and the fault server. What
/// every transport must do with streams (chunks, a cut-off stream, leaving the loop or cancelling
/// closing the connection, an unread stream holding up nothing) is checked for this transport by
/// the conformance suite (URLSessionConformanceTests); these are the rest.
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

    @Test func aDroppedConnectionEndsTheEventsWithAnErrorAfterAllThatArrived() async throws {
        // Stronger than the conformance suite, which allows a transport to lose what it had not
        // handed over yet: URLSessionTransport hands over every byte before the error.
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

}

extension Fault {
    /// A fault-server target for the streaming tests, which check what arrives, not deadlines: under
    /// the sanitizers the whole suite shares the servers and two cores, and a head can take seconds
    /// (one took over 2 s under ThreadSanitizer).
    fileprivate static func patient(_ path: String) -> Fault {
        var target = Fault(path: path)
        target.timeout = .seconds(60)
        return target
    }
}
