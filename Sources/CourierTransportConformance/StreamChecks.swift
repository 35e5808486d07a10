import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TransportConformance {
    static let streamChecks: [Check] = [
        Check("a streamed body arrives in order, in more than one chunk") { context in
            let stream = try await context.provider().stream(
                context.bin("stream-bytes/100000", task: .parameters(["chunk_size": 4096], encoding: .queryString)))
            #expect(stream.statusCode == 200)
            var total = 0
            var chunks = 0
            for try await chunk in stream.chunks {
                total += chunk.count
                chunks += 1
            }
            #expect(total == 100_000)
            #expect(chunks > 1)
        },
        Check("the streamed body equals the buffered one") { context in
            let target = context.fault("big", task: .parameters(["n": 3 << 20], encoding: .queryString))
            let whole = try await context.provider().request(target).data
            var streamed = Data()
            for try await chunk in try await context.provider().stream(target).chunks { streamed.append(chunk) }
            #expect(streamed == whole)
        },
        Check("JSON lines and Server-Sent Events are parsed as they arrive") { context in
            struct Line: Decodable { let id: Int }
            var ids: [Int] = []
            for try await line in try await context.provider().stream(context.bin("stream/4")).decodeLines(Line.self) {
                ids.append(line.id)
            }
            #expect(ids == [0, 1, 2, 3])
            var events: [ServerSentEvent] = []
            for try await event in try await context.provider().stream(context.fault("sse")).events {
                events.append(event)
            }
            #expect(events.map(\.data) == ["first", #"{"n":2}"#])
        },
        Check("a stream cut off by the server ends with an error, after events in order, none invented") { context in
            var events: [ServerSentEvent] = []
            let stream = try await context.provider().stream(context.fault("sse-drop"))
            var failure: (any Error)?
            do {
                for try await event in stream.events { events.append(event) }
            } catch {
                failure = error
            }
            #expect(failure is CourierError, "ended with \(String(describing: failure))")
            // A prefix: AsyncHTTPClient discards body parts it received but had not handed over yet
            // when the connection breaks (its documented difference); URLSessionTransport hands over
            // both events (checked in its own tests).
            let expected = ["first", #"{"n":2}"#]
            #expect(Array(expected.prefix(events.count)) == events.map(\.data), "got \(events.map(\.data))")
        },
        Check("leaving the loop closes the connection") { context in
            let id = UUID().uuidString
            let stream = try await context.provider().stream(
                context.fault("stream-watch", task: .parameters(["id": id], encoding: .queryString)))
            var seen = 0
            for try await _ in stream.chunks {
                seen += 1
                if seen == 2 { break }
            }
            #expect(try await watchedStreamEnd(id, context: context).closed)
        },
        Check("cancelling the reading task closes the connection") { context in
            let id = UUID().uuidString
            let stream = try await context.provider().stream(
                context.fault("stream-watch", task: .parameters(["id": id], encoding: .queryString)))
            let reader = Task {
                for try await _ in stream.chunks {}
            }
            reader.cancel()
            let outcome = await reader.result
            #expect(throws: CourierError.self) { try outcome.get() }
            #expect(try await watchedStreamEnd(id, context: context).closed)
        },
        Check("an unread stream holds up no other request") { context in
            let id = UUID().uuidString
            let provider = context.provider()
            let stream = try await provider.stream(
                context.fault("stream-watch", task: .parameters(["id": id], encoding: .queryString)))
            for _ in 0..<5 {
                #expect(try await provider.request(context.fault("ok")).statusCode == 200)
            }
            #expect(stream.statusCode == 200)
        },
        Check("a refused status throws before the body, with the error body") { context in
            var target = context.bin("status/503")
            target.task = .plain
            await #expect {
                try await Provider<Refusing>(transport: context.transport).stream(Refusing(base: target))
            } throws: { error in
                guard case .statusCode(let response) = error as? CourierError else { return false }
                return response.statusCode == 503
            }
        },
    ]
}

/// A target whose validation refuses what is not 2xx.
struct Refusing: TargetType {
    var base: Conformance
    var baseURL: URL { base.baseURL }
    var path: String { base.path }
    var headers: [String: String] { [:] }
    var validation: ValidationType { .successCodes }
    var timeout: Duration? { Conformance.hangGuard }
}

/// How the fault server's `/stream-watch` stream `id` ended: asked up to twelve times, each
/// question waiting up to 10 s for the end.
func watchedStreamEnd(_ id: String, context: Context) async throws -> (closed: Bool, state: String) {
    struct Watch: Decodable {
        let closed: Bool
        let state: String
    }
    var watch = Watch(closed: false, state: "writing")
    for _ in 0..<12 where watch.state == "writing" {
        watch = try await context.provider().request(
            context.fault("stream-closed", task: .parameters(["id": id, "wait": 10], encoding: .queryString))
        ).map(Watch.self)
    }
    return (watch.closed, watch.state)
}
