import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct NetworkLoggerTests {
    struct Secret: TargetType {
        var method: HTTPMethod = .post
        var task: HTTPTask = .data(Data(#"{"name":"ada"}"#.utf8))
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "users" }
        var headers: [String: String] {
            [
                "Authorization": "Bearer s3cret", "Cookie": "session=abc", "X-Api-Key": "k3y",
                "Accept": "application/json",
            ]
        }
        var sampleData: Data { Data(#"{"id":1}"#.utf8) }
    }

    private func lines(
        _ options: NetworkLoggerPlugin.Options, target: Secret = Secret(), redacting: Set<String> = [],
        maxBodyBytes: Int = 4096, status: Int = 200
    ) async -> String {
        let log = EventLog()
        let provider = Provider<Secret>(
            endpointClosure: { target in
                var endpoint = try Endpoint(target: target)
                endpoint.sampleResponseClosure = { .networkResponse(status, target.sampleData) }
                return endpoint
            },
            stubClosure: Provider.immediatelyStub,
            plugins: [
                .logger(options, redactedHeaders: redacting, maxBodyBytes: maxBodyBytes, output: { log.append($0) })
            ])
        _ = try? await provider.request(target)
        return log.all.joined(separator: "\n")
    }

    @Test func defaultLogsMethodURLAndStatus() async {
        let output = await lines(.default)
        #expect(output == "→ POST https://api.example.com/users\n← 200 https://api.example.com/users (8 bytes)")
    }

    @Test func headersAreLoggedWithSecretsRedacted() async {
        let output = await lines([.requestHeaders], redacting: ["x-api-key"])
        #expect(output.contains("Accept: application/json"))
        #expect(output.contains("Authorization: <redacted>"))
        #expect(output.contains("Cookie: <redacted>"))
        #expect(output.contains("X-Api-Key: <redacted>"))
        #expect(!output.contains("s3cret") && !output.contains("abc") && !output.contains("k3y"))
    }

    @Test func bodiesAreLoggedPerOption() async {
        let request = await lines([.requestBody])
        #expect(request.contains(#"body: {"name":"ada"}"#))
        let success = await lines([.successResponseBody])
        #expect(success.contains(#"body: {"id":1}"#))
        let notOnSuccess = await lines([.errorResponseBody])
        #expect(notOnSuccess.isEmpty)
    }

    @Test func errorBodiesUseTheirOwnOption() async {
        struct Validated: TargetType {
            var headers: [String: String] { [:] }
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "x" }
            var validation: ValidationType { .successCodes }
            var sampleResponse: SampleResponse { .networkResponse(500, Data("boom".utf8)) }
        }
        let log = EventLog()
        let provider = Provider<Validated>(
            stubClosure: Provider.immediatelyStub,
            plugins: [.logger([.responseStatus, .errorResponseBody], output: { log.append($0) })])
        _ = try? await provider.request(Validated())
        #expect(log.all.joined().contains("← 500"))
        #expect(log.all.joined().contains("body: boom"))
    }

    @Test func longBodiesAreCut() async {
        let big = Secret(task: .data(Data(String(repeating: "é", count: 100).utf8)))
        let output = await lines([.requestBody], target: big, maxBodyBytes: 11)
        #expect(output.contains("body: ééééé… (200 bytes, cut at 11)"))
    }

    @Test func nonUTF8BodiesAreSummarized() async {
        let binary = Secret(task: .data(Data([0xFF, 0xFE, 0x00, 0x01])))
        let output = await lines([.requestBody], target: binary)
        #expect(output.contains("body: <4 bytes, not UTF-8>"))
    }

    @Test func transportErrorsAreLogged() async {
        let log = EventLog()
        let provider = Provider<TestAPI>(
            transport: RecordingTransport { _ in throw URLError(.cannotConnectToHost) },
            plugins: [.logger(output: { log.append($0) })])
        _ = try? await provider.request(.plain)
        #expect(log.all.last?.hasPrefix("✗ The request failed") == true)
    }

    @Test func responseHeadersAreLoggedWithSecretsRedacted() async {
        let transport = StubTransport().on(
            nil, "users", .data(Data("{}".utf8), headers: ["Set-Cookie": "session=abc", "X-Rate-Limit": "10"]))
        let log = EventLog()
        let provider = Provider<Secret>(
            transport: transport, plugins: [.logger([.responseHeaders], output: { log.append($0) })])
        _ = try? await provider.request(Secret())
        let output = log.all.joined(separator: "\n")
        #expect(output.contains("X-Rate-Limit: 10"))
        #expect(output.contains("Set-Cookie: <redacted>"))
        #expect(!output.contains("abc"))
    }

    @Test func eachLineCanNameTheCallAndItsTargetWithoutItsValues() async {
        let log = EventLog()
        let provider = Provider<TestAPI>(
            stubClosure: Provider.immediatelyStub,
            plugins: [.logger([.method, .responseStatus, .target], output: { log.append($0) })])
        _ = try? await provider.request(.item(id: 4242))
        #expect(log.all.count == 2)
        for line in log.all {
            #expect(line.hasPrefix("[#1 TestAPI.item] "), "\(line)")
            #expect(!line.contains("4242"), "associated values may be secrets")
        }
        #expect(await lines([.method, .target]) == "[#1 Secret] → POST", "a struct target is its type")
    }

    struct Refreshing: Authenticator {
        func apply(_ credential: String, to request: inout URLRequest) {
            request.setValue(credential, forHTTPHeaderField: "X-Key")
        }
        func refresh(_ credential: String) async throws -> String { "fresh" }
    }

    /// A provider whose first call is refused (a refresh), then answered 503 (a retry), then
    /// 200 (and 200 from then on), logged by `plugin`.
    private func refusedThenRetried(_ plugin: NetworkLoggerPlugin) -> Provider<TestAPI> {
        let calls = Locked(0)
        let transport = RecordingTransport { request in
            let call = calls.withLock { count in
                count += 1
                return count
            }
            let status = call == 1 ? 401 : call == 2 ? 503 : 200
            return Response(statusCode: status, data: Data("{}".utf8), request: request)
        }
        return Provider<TestAPI>(
            transport: transport, plugins: [plugin], retryPolicy: RetryPolicy(baseDelay: .zero, jitter: .none),
            authentication: Authentication(Refreshing(), credential: "stale"))
    }

    @Test func retriesAndRefreshesAreLogged() async {
        let log = EventLog()
        let provider = refusedThenRetried(.logger(output: { log.append($0) }))
        _ = try? await provider.request(.validated(200, .successCodes))
        let output = log.all.joined(separator: "\n")
        #expect(output.contains("↻ the credential was refused for https://api.example.com"), "\(output)")
        #expect(output.contains("↻ attempt 1 failed (status 503); attempt 2 in 0.0 seconds"), "\(output)")
        #expect(log.all.last?.hasPrefix("← 200") == true)
    }

    @Test func aLoggerThatIsOffFormatsNothingInAnyHook() async {
        let log = EventLog()
        let asked = Locked(0)
        let formatted = Locked(0)
        let enabled = Locked(false)
        let plugin = NetworkLoggerPlugin(
            configuration: .init(
                options: .verbose,
                responseBodyFormatter: { _, _ in
                    formatted.withLock { $0 += 1 }
                    return nil
                },
                output: { log.append($0) },
                isEnabled: {
                    asked.withLock { $0 += 1 }
                    return enabled.withLock { $0 }
                }))
        let provider = refusedThenRetried(plugin)
        _ = try? await provider.request(.validated(200, .successCodes))
        #expect(log.all.isEmpty)
        #expect(formatted.withLock { $0 } == 0)
        // willSend and didReceive for three attempts, one refresh, one retry.
        #expect(asked.withLock { $0 } == 8)

        enabled.withLock { $0 = true }
        _ = try? await provider.request(.validated(200, .successCodes))
        #expect(log.all.contains { $0.contains("← 200") })
        #expect(formatted.withLock { $0 } >= 1)
    }

    @Test func bodiesThatAreNotInTheRequestSayWhatTheyAre() async throws {
        struct Upload: TargetType {
            var task: HTTPTask
            var method: HTTPMethod { .post }
            var headers: [String: String] { [:] }
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "upload" }
        }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("report.csv", contents: Data(repeating: 7, count: 1234))
        // Over `maxBodyReadInRequest`, a form with a file part is built when sent, not in the request.
        let large = try folder.file("large.csv", contents: Data(count: MultipartFormData.maxBodyReadInRequest))
        let form = MultipartFormData(parts: [
            .init(name: "a", data: Data("b".utf8)), .init(name: "file", fileURL: large),
        ])
        let small = MultipartFormData(
            boundary: "B", parts: [.init(name: "file", data: Data("x,y".utf8), fileName: "r.csv")])
        let log = EventLog()
        let provider = Provider<Upload>(
            stubClosure: Provider.immediatelyStub, plugins: [.logger([.requestBody], output: { log.append($0) })])
        _ = try? await provider.request(Upload(task: .uploadFile(file)))
        _ = try? await provider.request(Upload(task: .uploadMultipart(form)))
        _ = try? await provider.request(Upload(task: .uploadMultipart(small)))
        #expect(log.all.first == "  body: file report.csv (1234 bytes)")
        #expect(log.all.dropFirst().first?.hasPrefix("  body: multipart form, 2 parts") == true, "\(log.all)")
        #expect(log.all.last?.hasPrefix("  body: --B\r\nContent-Disposition: form-data; name=\"file\"") == true)
    }

    @Test func bodyFormattersRenderBodies() async {
        let log = EventLog()
        let provider = Provider<Secret>(
            stubClosure: Provider.immediatelyStub,
            plugins: [
                NetworkLoggerPlugin(
                    configuration: .init(
                        options: [.requestBody, .successResponseBody],
                        requestBodyFormatter: { body, _ in "\(body.count) bytes of JSON" },
                        responseBodyFormatter: { body, _ in NetworkLoggerPlugin.prettyJSON(body) },
                        output: { log.append($0) }))
            ])
        _ = try? await provider.request(Secret())
        #expect(log.all.first == "  body: 14 bytes of JSON")
        #expect(log.all.last == "  body: {\n  \"id\" : 1\n}")
        #expect(NetworkLoggerPlugin.prettyJSON(Data("not json".utf8)) == nil)
    }

    @Test func cURLQuotesEverythingAndRedacts() throws {
        var request = URLRequest(url: URL(string: "https://api.example.com/a?b=c d")!)
        request.httpMethod = "PUT"
        request.setValue("it's", forHTTPHeaderField: "X-Quote")
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        request.httpBody = Data("it's a body".utf8)
        let curl = NetworkLoggerPlugin().cURL(for: request)
        #expect(curl.hasPrefix("curl -X 'PUT' "))
        #expect(curl.contains(#"-H 'X-Quote: it'\''s'"#))
        #expect(curl.contains("-H 'Authorization: <redacted>'"))
        #expect(curl.contains(#"--data-binary 'it'\''s a body'"#))
        #expect(curl.hasSuffix("'\(request.url!.absoluteString)'"))
    }
}
