import Courier
import CourierTesting
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

@testable import CourierOpenAPI

/// A generated client (Generated/, from OpenAPI/openapi.yaml) on `CourierTransport`, against
/// `StubTransport` routes.
@Suite struct CourierTransportTests {
    static let server = URL(string: "https://echo.example.com")!
    static let echo = Data(#"{"url":"https://echo.example.com/get?name=ada","args":{"name":"ada"}}"#.utf8)

    @Test func aGeneratedCallIsSentWithItsOperationIDAsTheTargetName() async throws {
        let transport = StubTransport()
        transport.on(.get, "get", .data(Self.echo, headers: ["Content-Type": "application/json"]))
        let names = OperationNames()
        let provider = Provider<OpenAPIOperation>(transport: transport, plugins: [names])
        let client = Client(serverURL: Self.server, transport: CourierTransport(provider: provider))

        let echo = try await client.getEcho(query: .init(name: "ada")).ok.body.json
        #expect(echo.args?.additionalProperties["name"] == "ada")
        #expect(names.names == ["OpenAPIOperation.getEcho"])
        let sent = try #require(transport.requests.first)
        #expect(sent.request.url?.absoluteString == "https://echo.example.com/get?name=ada")
        #expect(sent.request.value(forHTTPHeaderField: "Accept") == "application/json")
        let operation = try #require(sent.target as? OpenAPIOperation)
        #expect(operation.request.operationID == "getEcho")
    }

    /// Found by review: `.accessToken`, as the documentation shows it, sent no token with a
    /// generated call; a status HTTPTypes cannot hold trapped; repeated `Cookie` fields were
    /// joined as one cookie.
    @Test func anAccessTokenIsSentAndHostileStatusesAreTypedErrors() async throws {
        let transport = StubTransport()
        transport.on(.get, "get", .data(Self.echo, headers: ["Content-Type": "application/json"]))
        let provider = Provider<OpenAPIOperation>(transport: transport, plugins: [.accessToken { _ in "t0ken" }])
        let client = Client(serverURL: Self.server, transport: CourierTransport(provider: provider))
        _ = try await client.getEcho(query: .init(name: "ada")).ok.body.json
        #expect(transport.requests.first?.request.value(forHTTPHeaderField: "Authorization") == "Bearer t0ken")

        var fields = HTTPFields()
        fields.append(HTTPField(name: .cookie, value: "a=1"))
        fields.append(HTTPField(name: .cookie, value: "b=2"))
        fields.append(HTTPField(name: .accept, value: "a/b"))
        fields.append(HTTPField(name: .accept, value: "c/d"))
        let headers = CourierTransport.headers(fields)
        #expect(headers["Cookie"] == "a=1; b=2")
        #expect(headers["Accept"] == "a/b, c/d")

        for code in [1_000, -1] {
            #expect(throws: CourierError.self) { _ = try CourierTransport.status(code) }
        }
        #expect(try CourierTransport.status(204).code == 204)
    }

    /// An OpenAPI path is appended to the server's URL as written: `/` under a base path keeps its
    /// slash (Courier's own rule for a target's `/` drops it).
    @Test(arguments: [
        ("https://echo.example.com/api", "/", "https://echo.example.com/api/"),
        ("https://echo.example.com/api/", "/", "https://echo.example.com/api/"),
        ("https://echo.example.com", "/", "https://echo.example.com/"),
        ("https://echo.example.com/api", "/?page=2", "https://echo.example.com/api/?page=2"),
        ("https://echo.example.com/api", "/users", "https://echo.example.com/api/users"),
        ("https://echo.example.com/api", "/users/", "https://echo.example.com/api/users/"),
    ])
    func theRootPathKeepsItsSlash(base: String, path: String, expected: String) throws {
        let operation = OpenAPIOperation.operation(
            .init(
                operationID: "root", baseURL: try #require(URL(string: base)), pathAndQuery: path, method: .get,
                headers: [:], body: nil, retriedStatusCodes: []))
        #expect(try Endpoint(target: operation).url.absoluteString == expected)
    }

    @Test func aBodyThatCanBeReadOnceIsSentAgainOnRetry() async throws {
        let transport = StubTransport()
        transport.on(
            .post, "anything",
            .sequence([
                .status(503),
                .data(Data(#"{"url":"u","data":"ok"}"#.utf8), headers: ["Content-Type": "application/json"]),
            ]))
        let provider = Provider<OpenAPIOperation>(
            transport: transport, clock: ImmediateClock(), retryPolicy: RetryPolicy(maxAttempts: 2, methods: nil))
        let client = Client(serverURL: Self.server, transport: CourierTransport(provider: provider))
        let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
        continuation.yield(ArraySlice("hello, ".utf8))
        continuation.yield(ArraySlice("world".utf8))
        continuation.finish()
        let body = HTTPBody(stream, length: .unknown)
        #expect(body.iterationBehavior == .single)

        let echo = try await client.postBytes(body: .binary(body)).ok.body.json
        #expect(echo.data == "ok")
        #expect(transport.requests.map(\.body) == [Data("hello, world".utf8), Data("hello, world".utf8)])
    }

    @Test func aRetryableStatusAfterTheLastAttemptReachesTheClient() async throws {
        let transport = StubTransport()
        transport.on(.get, "status/503", .data(Data("busy".utf8), status: 503, headers: ["Retry-After": "0"]))
        let provider = Provider<OpenAPIOperation>(
            transport: transport, clock: ImmediateClock(), retryPolicy: RetryPolicy(maxAttempts: 3))
        let client = Client(serverURL: Self.server, transport: CourierTransport(provider: provider))
        guard case .default(let statusCode, _) = try await client.getStatus(path: .init(code: 503)) else {
            Issue.record("expected the default response")
            return
        }
        #expect(statusCode == 503)
        #expect(transport.requests.count == 3)
    }

    @Test func aRequestBodyOverTheLimitIsRefusedBeforeAnythingIsSent() async throws {
        let transport = StubTransport()
        let provider = Provider<OpenAPIOperation>(transport: transport)
        let client = Client(
            serverURL: Self.server, transport: CourierTransport(provider: provider, maxRequestBodyBytes: 4))
        let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
        continuation.yield(ArraySlice("12345".utf8))
        continuation.finish()
        let error = await #expect(throws: ClientError.self) {
            _ = try await client.postBytes(body: .binary(HTTPBody(stream, length: .unknown)))
        }
        #expect(error?.underlyingError as? CourierOpenAPIError == .requestBodyTooLarge(limit: 4))
        #expect(transport.requests.isEmpty)
    }

    @Test func theResponseBodyStreamsInChunks() async throws {
        let transport = StubTransport()
        let chunks = (0..<4).map { Data(repeating: UInt8($0), count: 1000) }
        transport.on(
            .get, "stream-bytes/4000",
            .stream(chunks, headers: ["Content-Type": "application/octet-stream", "Content-Length": "4000"]))
        let client = Client(
            serverURL: Self.server, transport: CourierTransport(provider: Provider(transport: transport)))

        let body = try await client.streamBytes(path: .init(count: 4000)).ok.body.binary
        #expect(body.iterationBehavior == .single)
        #expect(body.length == .known(4000))
        var received: [Int] = []
        for try await chunk in body { received.append(chunk.count) }
        #expect(received.reduce(0, +) == 4000)
        #expect(received.count == 4)
    }

    @Test func anUndocumentedStatusReachesTheClientUnvalidated() async throws {
        let transport = StubTransport()
        transport.on(.get, "status/418", .status(418))
        let client = Client(
            serverURL: Self.server, transport: CourierTransport(provider: Provider(transport: transport)))
        let output = try await client.getStatus(path: .init(code: 418))
        guard case .default(let statusCode, _) = output else {
            Issue.record("expected the default response, got \(output)")
            return
        }
        #expect(statusCode == 418)
    }

    @Test func anEncodedBodyHasNoKnownLength() {
        var fields = HTTPFields()
        fields[.contentLength] = "10"
        #expect(CourierTransport.length(fields) == .known(10))
        fields[.contentEncoding] = "gzip"
        #expect(CourierTransport.length(fields) == .unknown)
        #expect(CourierTransport.length(HTTPFields()) == .unknown)
    }

    @Test func repeatedHeaderFieldsAreJoined() {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .accept, value: "a"))
        fields.append(HTTPField(name: HTTPField.Name("ACCEPT")!, value: "b"))
        fields.append(HTTPField(name: .contentType, value: "c"))
        #expect(CourierTransport.headers(fields) == ["Accept": "a, b", "Content-Type": "c"])
    }
}
