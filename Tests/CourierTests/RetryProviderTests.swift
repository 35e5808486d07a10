import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct RetryProviderTests {
    /// Answers each request with the next status in `statuses` (the last one repeats).
    final class ScriptedTransport: Transport {
        private let statuses: [Int]
        private let sentBodies = Locked<[Data?]>([])
        init(_ statuses: [Int]) { self.statuses = statuses }
        var bodies: [Data?] { sentBodies.withLock { $0 } }
        var calls: Int { bodies.count }

        func send(_ transfer: Transfer) async throws -> Response {
            var body = transfer.request.httpBody
            if case .file(let url) = transfer.body { body = try Data(contentsOf: url) }
            let index = sentBodies.withLock { bodies in
                bodies.append(body)
                return bodies.count - 1
            }
            let code = statuses[min(index, statuses.count - 1)]
            return Response(statusCode: code, data: Data("\(code)".utf8), request: transfer.request)
        }
    }

    /// Reads the request's body stream to its end and answers with `status` (0: the connection is
    /// lost, which a retry policy retries), recording how many bytes each attempt's stream gave.
    final class StreamReader: Transport {
        let status: Int
        private let read = Locked<[Int]>([])
        init(status: Int) { self.status = status }
        var sizes: [Int] { read.withLock { $0 } }

        func send(_ transfer: Transfer) async throws -> Response {
            var count = 0
            if let stream = transfer.request.httpBodyStream {
                stream.open()
                var buffer = [UInt8](repeating: 0, count: 64)
                while true {
                    let n = stream.read(&buffer, maxLength: buffer.count)
                    if n <= 0 { break }
                    count += n
                }
                stream.close()
            }
            read.withLock { $0.append(count) }
            if status == 0 { throw URLError(.networkConnectionLost) }
            return Response(statusCode: status, data: Data(), request: transfer.request)
        }
    }

    struct Token: Authenticator {
        func apply(_ credential: String, to request: inout URLRequest) {
            request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        }
        func refresh(_ credential: String) async throws -> String { "fresh" }
    }

    /// A body a request mapping set as an `httpBodyStream` can be read once: the request is sent
    /// once, neither retried nor sent again after a refresh (which sent the used-up stream, an
    /// empty body). Found by review.
    @Test(arguments: [0, 401]) func aBodyStreamIsSentOnce(status: Int) async throws {
        let transport = StreamReader(status: status)
        let provider = Provider<TestAPI>(
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                request.httpMethod = "PUT"
                request.httpBodyStream = InputStream(data: Data("payload".utf8))
                return request
            }, transport: transport, clock: ImmediateClock(), retryPolicy: policy,
            authentication: Authentication(Token(), credential: "stale"))
        do {
            let response = try await provider.request(.plain)
            #expect(status == 401 && response.statusCode == 401)
        } catch {
            // Not `retryLimitReached`: there was one attempt.
            #expect(status == 0 && error.underlyingError is URLError, "\(error)")
        }
        #expect(transport.sizes == [7])
    }

    struct RetryLog: Plugin {
        let log: EventLog
        func willRetry(
            _ request: URLRequest, after error: CourierError, delay: Duration, context: RequestContext
        ) async {
            log.append("retry \(context.attempt) after \(delay)")
        }
    }

    private let policy = RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), maxDelay: .seconds(10), jitter: .none)

    @Test func retriesUntilSuccessWaitingOnTheClock() async throws {
        let clock = TestClock()
        let transport = ScriptedTransport([503, 502, 200])
        let log = EventLog()
        let provider = Provider<TestAPI>(
            transport: transport, plugins: [RecordingPlugin("A", log: log), RetryLog(log: log)], clock: clock,
            retryPolicy: policy)
        let request = Task { try await provider.request(.validated(0, .successCodes)) }
        await clock.waitForSleepers(1)
        #expect(transport.calls == 1)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        #expect(transport.calls == 2)
        clock.advance(by: .seconds(2))
        #expect(try await request.value.statusCode == 200)
        #expect(transport.calls == 3)
        #expect(log.all.filter { $0.hasPrefix("retry") } == ["retry 1 after 1.0 seconds", "retry 2 after 2.0 seconds"])
        #expect(log.all.filter { $0 == "A.willSend" }.count == 3)
        #expect(
            log.all.filter { $0.hasPrefix("A.didReceive") } == [
                "A.didReceive(statusCode 503)", "A.didReceive(statusCode 502)", "A.didReceive(200)",
            ])
        #expect(log.all.filter { $0.hasPrefix("A.process") } == ["A.process(200)"])
    }

    @Test func finalErrorSaysHowManyAttempts() async {
        let clock = TestClock()
        let provider = Provider<TestAPI>(transport: ScriptedTransport([503]), clock: clock, retryPolicy: policy)
        let request = Task { try await provider.request(.validated(0, .successCodes)) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        let error = (await request.result).failure as? CourierError
        guard case .retryLimitReached(let attempts, let last) = error else {
            Issue.record("expected retryLimitReached, got \(String(describing: error))")
            return
        }
        #expect(attempts == 3)
        #expect(last.response?.statusCode == 503)
        #expect(error?.response?.statusCode == 503)
        #expect(error?.localizedDescription.contains("3 attempts") == true)
    }

    @Test func postIsNotRetried() async {
        struct Create: TargetType {
            var headers: [String: String] { [:] }
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "items" }
            var method: HTTPMethod { .post }
            var validation: ValidationType { .successCodes }
        }
        let transport = ScriptedTransport([503, 200])
        let provider = Provider<Create>(transport: transport, retryPolicy: policy)
        await #expect {
            try await provider.request(Create())
        } throws: { error in
            guard case CourierError.statusCode = error else { return false }
            return true
        }
        #expect(transport.calls == 1, "no retry")
    }

    @Test func cancellingDuringTheWaitEndsAtOnce() async {
        let clock = TestClock()
        let log = EventLog()
        let transport = ScriptedTransport([503])
        let provider = Provider<TestAPI>(
            transport: transport, plugins: [RecordingPlugin("A", log: log)], clock: clock, retryPolicy: policy)
        let request = Task { try await provider.request(.validated(0, .successCodes)) }
        await clock.waitForSleepers(1)
        request.cancel()
        #expect(((await request.result).failure as? CourierError)?.isCancellation == true)
        #expect(transport.calls == 1)
        #expect(log.all.suffix(2) == ["A.didReceive(cancelled)", "A.process(cancelled)"])
    }

    @Test func targetPolicyOverridesTheProvider() async throws {
        struct Flaky: TargetType {
            var headers: [String: String] { [:] }
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "flaky" }
            var validation: ValidationType { .successCodes }
            var retryPolicy: RetryPolicy? { RetryPolicy(maxAttempts: 2, baseDelay: .zero, jitter: .none) }
        }
        let transport = ScriptedTransport([500, 200])
        let provider = Provider<Flaky>(transport: transport, retryPolicy: .disabled)
        #expect(try await provider.request(Flaky()).statusCode == 200)
        #expect(transport.calls == 2)
    }

    @Test func transportErrorsAreRetried() async throws {
        final class FailingOnce: Transport {
            let calls = Locked(0)
            func send(_ transfer: Transfer) async throws -> Response {
                let request = transfer.request
                let call = calls.withLock { value in
                    value += 1
                    return value
                }
                if call == 1 { throw URLError(.networkConnectionLost) }
                return Response(statusCode: 200, data: Data(), request: request)
            }
        }
        let transport = FailingOnce()
        let provider = Provider<TestAPI>(
            transport: transport, retryPolicy: RetryPolicy(baseDelay: .zero, jitter: .none))
        #expect(try await provider.request(.plain).statusCode == 200)
        #expect(transport.calls.withLock { $0 } == 2)
    }

    @Test func fileAndMultipartBodiesAreResentWhole() async throws {
        struct Upload: TargetType {
            var headers: [String: String] { [:] }
            var task: HTTPTask
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "upload" }
            var method: HTTPMethod { .put }
            var validation: ValidationType { .successCodes }
        }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("body.bin", contents: Data("file body".utf8))
        let fileTransport = ScriptedTransport([503, 200])
        let anyMethod = RetryPolicy(baseDelay: .zero, jitter: .none, methods: nil)
        _ = try await Provider<Upload>(transport: fileTransport, retryPolicy: anyMethod).request(
            Upload(task: .uploadFile(file)))
        #expect(fileTransport.bodies == [Data("file body".utf8), Data("file body".utf8)])

        let form = MultipartFormData(
            boundary: "b", parts: [.init(name: "f", data: Data(repeating: 7, count: 2_000))], memoryThreshold: 100)
        let formTransport = ScriptedTransport([503, 200])
        _ = try await Provider<Upload>(transport: formTransport, retryPolicy: anyMethod).request(
            Upload(task: .uploadMultipart(form)))
        #expect(formTransport.bodies.count == 2)
        #expect(formTransport.bodies[0] == formTransport.bodies[1])
        #expect((formTransport.bodies[0]?.count ?? 0) > 2_000)
    }
}
