import Courier
import CourierTesting
import CourierTracing
import Foundation
import InMemoryTracing
import Testing
import Tracing

/// `.tracing(tracer:)`: one span per call, attempts as events, the context in the sent request.
@Suite struct TracingPluginTests {
    enum API: TargetType {
        case user(String)
        var baseURL: URL { URL(string: "https://api.example.com:8443")! }
        var path: String {
            switch self {
            case .user(let name): "users/\(name)"
            }
        }
        var headers: [String: String] { [:] }
        var validation: ValidationType { .successCodes }
        var sampleResponse: SampleResponse { .networkResponse(200, Data("{}".utf8)) }
    }

    @Test func aCallRetriedTwiceIsOneSpanWithThreeAttemptEvents() async throws {
        let tracer = InMemoryTracer()
        let transport = StubTransport()
        transport.on(.get, "users/ada", .sequence([.status(503), .status(503), .data(Data("{}".utf8))]))
        let provider = Provider<API>(
            transport: transport, plugins: [.tracing(tracer: tracer)], clock: ImmediateClock(),
            retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(250), jitter: .none))
        _ = try await provider.request(.user("ada"))

        let spans = tracer.finishedSpans
        try #require(spans.count == 1)
        let span = spans[0]
        #expect(span.operationName == "GET API.user")
        #expect(span.kind == .client)
        #expect(
            span.events.filter { $0.name == "courier.attempt" }.map { $0.attributes.get("courier.attempt") } == [
                .int64(1), .int64(2), .int64(3),
            ])
        #expect(span.events.filter { $0.name == "courier.retry" }.count == 2)
        #expect(
            span.events.first { $0.name == "courier.retry" }?.attributes.get("courier.retry.delay_ms") == .int64(250))
        #expect(span.attributes.get("courier.attempts") == .int64(3))
        #expect(span.attributes.get("http.response.status_code") == .int64(200))
        #expect(span.attributes.get("courier.target") == .string("API.user"))
        #expect(span.attributes.get("http.request.method") == .string("GET"))
        #expect(span.attributes.get("server.address") == .string("api.example.com"))
        #expect(span.attributes.get("server.port") == .int64(8443))
        #expect(span.errors.isEmpty)
        #expect(span.status == nil)
        #expect(tracer.activeSpans.isEmpty)

        // Every attempt carried the span's context, as the tracer writes it.
        let sent = transport.requests.map { $0.request.value(forHTTPHeaderField: InMemoryTracer.spanIDKey) }
        #expect(sent == Array(repeating: span.spanID, count: 3))
    }

    /// Refreshable credentials in a header of their own.
    struct Renewing: Authenticator {
        func apply(_ credential: Int, to request: inout URLRequest) {
            request.setValue("\(credential)", forHTTPHeaderField: "X-Credential")
        }
        func refresh(_ credential: Int) async throws -> Int { credential + 1 }
    }

    /// The span of a call that is refused (401, refreshed), retried (503) and answered, as text:
    /// name, events, attributes and errors, without the ids and times that differ between runs.
    func spanOfACallThroughEveryHook(everyHook: Bool) async throws -> [String] {
        let tracer = InMemoryTracer()
        let transport = StubTransport()
        transport.on(.get, "users/ada", .sequence([.status(401), .status(503), .data(Data("{}".utf8))]))
        let plugin: any Plugin = .tracing(tracer: tracer)
        let provider = Provider<API>(
            transport: transport, plugins: [everyHook ? EveryHookPlugin(plugin) : plugin], clock: ImmediateClock(),
            retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(250), jitter: .none),
            authentication: Authentication(Renewing(), credential: 0))
        _ = try await provider.request(.user("ada"))
        #expect(transport.requests.count == 3)
        return tracer.finishedSpans.flatMap { span in
            var attributes: [String] = []
            span.attributes.forEach { key, value in
                if key != "courier.request_id" { attributes.append("\(key)=\(value)") }  // unique per provider
            }
            let events = span.events.map { event in
                var fields: [String] = []
                event.attributes.forEach { key, value in fields.append("\(key)=\(value)") }
                return "event \(event.name) " + fields.sorted().joined(separator: ",")
            }
            return ["span \(span.operationName)"] + events + attributes.sorted() + span.errors.map { "\($0.error)" }
        }
    }

    /// `implementedHooks` leaves out no hook the plugin implements: with every hook called
    /// (`EveryHookPlugin`), the span is the same, refresh and retry included.
    @Test func itsDeclaredHooksAreAllItImplements() async throws {
        let alone = try await spanOfACallThroughEveryHook(everyHook: false)
        let everyHook = try await spanOfACallThroughEveryHook(everyHook: true)
        #expect(alone.contains { $0.hasPrefix("event courier.retry") })
        #expect(alone == everyHook)
    }

    @Test func theResponsesCacheStatusIsOnTheSpan() async throws {
        let tracer = InMemoryTracer()
        let transport = StubTransport()
        transport.on(.get, "users/ada", .data(Data("{}".utf8), headers: ["Cache-Control": "max-age=600"]))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let provider = Provider<API>(
            transport: transport, plugins: [.tracing(tracer: tracer)], cache: HTTPCache(now: { now }))
        _ = try await provider.request(.user("ada"))
        _ = try await provider.request(.user("ada"))

        #expect(transport.requests.count == 1)
        #expect(
            tracer.finishedSpans.map { $0.attributes.get("courier.cache_status") } == [
                .string("network"), .string("hit"),
            ])
    }

    /// An answer of 4xx or 5xx that the target does not refuse (validation `.none`) still ends
    /// its span as an error, with its status as `error.type`; a 2xx does not (found by review).
    @Test func anErrorStatusTheTargetAcceptsIsStillAnErrorSpan() async throws {
        struct Lenient: TargetType {
            var path: String
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var headers: [String: String] { [:] }
        }
        let tracer = InMemoryTracer()
        let transport = StubTransport()
        transport.on(.get, "missing", .status(404))
        transport.on(.get, "fine", .status(200))
        let provider = Provider<Lenient>(transport: transport, plugins: [.tracing(tracer: tracer)])
        #expect(try await provider.request(Lenient(path: "missing")).statusCode == 404)
        _ = try await provider.request(Lenient(path: "fine"))
        let spans = tracer.finishedSpans
        try #require(spans.count == 2)
        #expect(spans[0].status?.code == .error)
        #expect(spans[0].attributes.get("error.type") == .string("404"))
        #expect(spans[1].status?.code != .error)
        #expect(spans[1].attributes.get("error.type") == nil)
    }

    @Test func aCancelledCallEndsItsSpanWithTheError() async throws {
        let tracer = InMemoryTracer()
        let transport = GatedTransport()
        let provider = Provider<API>(transport: transport, plugins: [.tracing(tracer: tracer)])
        let call = Task { try await provider.request(.user("ada")) }
        await transport.waitForRequests(1)
        call.cancel()
        _ = try? await call.value

        let spans = tracer.finishedSpans
        try #require(spans.count == 1)
        #expect(spans[0].attributes.get("error.type") == .string("cancelled"))
        #expect(spans[0].errors.count == 1)
        #expect(spans[0].status?.code == .error)
        #expect(tracer.activeSpans.isEmpty)
    }

    @Test func theCallersTaskLocalContextIsTheParent() async throws {
        let tracer = InMemoryTracer()
        let transport = StubTransport()
        transport.on(.get, "users/ada", .status(404))
        let provider = Provider<API>(transport: transport, plugins: [.tracing(tracer: tracer)])
        let parent = tracer.startSpan("handler", context: .topLevel)
        let failed = await ServiceContext.withValue(parent.context) {
            do {
                _ = try await provider.request(.user("ada"))
                return false
            } catch {
                return true
            }
        }
        #expect(failed)
        parent.end()

        let call = try #require(tracer.finishedSpans.first { $0.operationName == "GET API.user" })
        #expect(call.traceID == parent.traceID)
        #expect(call.parentSpanID == parent.spanID)
        #expect(call.attributes.get("http.response.status_code") == .int64(404))
        #expect(call.attributes.get("error.type") == .string("statusCode"))
        let sent = try #require(transport.requests.first?.request)
        #expect(sent.value(forHTTPHeaderField: InMemoryTracer.traceIDKey) == parent.traceID)
        #expect(sent.value(forHTTPHeaderField: InMemoryTracer.spanIDKey) == call.spanID)
    }

    @Test func connectionDetailsTheTransportReportsAreAttributes() async throws {
        let tracer = InMemoryTracer()
        let transport = StubTransport()
        transport.on(
            .get, "users/ada",
            .handler { request in
                Response(
                    statusCode: 200, data: Data(), request: request,
                    transferMetrics: TransferMetrics(
                        httpVersion: "HTTP/2", connectionReused: false, remoteAddress: "127.0.0.1",
                        domainLookup: .milliseconds(3), connect: .milliseconds(12), secureConnection: .milliseconds(8)))
            })
        let provider = Provider<API>(transport: transport, plugins: [.tracing(tracer: tracer)])
        _ = try await provider.request(.user("ada"))
        let span = try #require(tracer.finishedSpans.first)
        #expect(span.attributes.get("network.protocol.version") == .string("2"))
        #expect(span.attributes.get("network.peer.address") == .string("127.0.0.1"))
        #expect(span.attributes.get("courier.connection.reused") == .bool(false))
        #expect(span.attributes.get("courier.connection.dns_ms") == .int64(3))
        #expect(span.attributes.get("courier.connection.connect_ms") == .int64(12))
        #expect(span.attributes.get("courier.connection.tls_ms") == .int64(8))
    }

    @Test func secretsInTheURLAreRedacted() async throws {
        let tracer = InMemoryTracer()
        let provider = Provider<MultiTarget>(
            stubClosure: Provider.immediatelyStub, plugins: [.tracing(tracer: tracer)])
        struct Secret: TargetType {
            var baseURL: URL { URL(string: "https://user:pw@api.example.com")! }
            var path: String { "search" }
            var task: HTTPTask { .parameters(["access_token": .string("s3cr3t"), "q": "x"], encoding: .queryString) }
            var headers: [String: String] { [:] }
            var sampleResponse: SampleResponse { .networkResponse(200, Data()) }
        }
        _ = try await provider.request(MultiTarget(Secret()))
        let url = try #require(tracer.finishedSpans.first?.attributes.get("url.full"))
        guard case .string(let text) = url else {
            Issue.record("url.full is \(url)")
            return
        }
        #expect(!text.contains("s3cr3t"))
        #expect(!text.contains("pw@"))
        #expect(text.contains("q=x"))
    }
}
