import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Careless input: every class of hostile or mistaken input gets a typed error before anything is
/// sent, never a crash or a hang.
@Suite struct CarelessInputTests {
    struct Path: TargetType {
        var headers: [String: String] { [:] }
        var path: String
        var baseURL: URL { URL(string: "https://api.example.com/api/v1")! }
    }

    @Test(arguments: [
        "users/../../admin", "..", "../x", "a/./b", ".", "%2e%2e/admin", "a/%2E%2e", "a/..%2F..", "..\\admin",
        "a\\..\\b", "x/.",
        // Beside an escape that does not decode (a lone `%`, bytes that are not UTF-8): found by review.
        "%2e%2e/admin/100%", "%2e%2e/x%ff", "a/%2E%2E/%C0b", "a/%2e%zz/%2e%2e",
    ])
    func dotSegmentsNeverLeaveTheBasePath(path: String) {
        #expect {
            try Endpoint(target: Path(path: path)).urlRequest()
        } throws: { error in
            guard case CourierError.requestMapping(let reason) = error else { return false }
            return reason.contains("segment")
        }
    }

    /// A refused path's error keeps the secrets of its query out. Found by review.
    @Test func aRefusedPathKeepsItsQuerySecretsOutOfTheError() {
        #expect {
            try Endpoint(target: Path(path: "../x?api_key=S3CRET")).urlRequest()
        } throws: { error in
            !"\(error)".contains("S3CRET") && "\(error)".contains("segment")
        }
    }

    @Test(arguments: ["a..b/c", "..a", "a.", "v1.2/items", "%2e%2ex", "search?q=../x", "files/100%", "%2e%2e%"])
    func dotsInsideSegmentsAreFine(path: String) throws {
        let url = try #require(try Endpoint(target: Path(path: path)).urlRequest().url)
        #expect(url.host == "api.example.com")
        #expect(url.path.hasPrefix("/api/v1/"))
    }

    /// A plugin's `prepare` can change anything; the request is checked again after it.
    struct Rewrite: Plugin {
        let change: @Sendable (inout URLRequest) -> Void
        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            var request = request
            change(&request)
            return request
        }
    }

    @Test(arguments: [
        "X-Evil\r\nX-Injected", "X Space", "", "Bad:Colon",
    ])
    func headerNamesSetByPluginsAreChecked(name: String) async {
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            transport: transport, plugins: [Rewrite { $0.addValue("1", forHTTPHeaderField: name) }])
        await #expect {
            try await provider.request(.plain)
        } throws: { error in
            guard case CourierError.requestMapping = error else { return false }
            return true
        }
        #expect(transport.sent.isEmpty)
    }

    @Test(arguments: ["GET /x HTTP/1.1\r\nX: 1", "GET /x", "PO ST", "G\0ET"])
    func methodsSetByPluginsAreChecked(method: String) async {
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(transport: transport, plugins: [Rewrite { $0.httpMethod = method }])
        await #expect {
            try await provider.request(.plain)
        } throws: { error in
            guard case CourierError.requestMapping(let reason) = error else { return false }
            return reason.contains("method")
        }
        #expect(transport.sent.isEmpty)
    }

    /// The pipeline skips the final request check when nothing changed the request since
    /// `urlRequest()` built it (issue 29): that holds only while `urlRequest()` refuses every
    /// method and header the final check refuses, and adds none it would refuse.
    @Test(
        arguments: [
            ("GET", ["Accept": "application/json"]), ("GET\r\nX: 1", [:]), ("PO ST", [:]), ("", [:]),
            ("PURGE", ["X-Evil\r\nX-Injected": "1"]), ("POST", ["X": "a\r\nb"]), ("POST", ["": "1"]),
            ("POST", ["X": "a\u{0}b"]), ("PATCH", ["Bad:Colon": "1"]), ("PUT", ["X Space": "1"]),
            ("DELETE", ["X-Fine": " padded "]), ("GET", ["X": "caf\u{E9}"]),
        ] as [(String, [String: String])])
    func whatTheBuiltRequestPassesTheFinalCheckPasses(method: String, headers: [String: String]) throws {
        let tasks: [HTTPTask] = [
            .plain, .data(Data("x".utf8)), .parameters(["a": .int(1)], encoding: .json),
            .parameters(["a": .int(1)], encoding: .url), .json(["a": 1]),
            .uploadMultipart(MultipartFormData(parts: [.init(name: "f\r\n", data: Data("x".utf8))])),
        ]
        for task in tasks {
            let endpoint = Endpoint(
                url: try #require(URL(string: "https://api.example.com/x")), method: HTTPMethod(rawValue: method),
                task: task, headers: headers)
            guard let request = try? endpoint.urlRequest() else { continue }
            #expect(throws: Never.self, "\(method) \(headers) \(task)") { try RequestValidation.validate(request) }
        }
    }

    @Test func requestMappingOutputIsChecked() async {
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                request.httpMethod = "GET\r\nX-Smuggled: 1"
                return request
            }, transport: transport)
        await #expect(throws: CourierError.self) { try await provider.request(.plain) }
        #expect(transport.sent.isEmpty)
    }

    struct Signer: Authenticator {
        func apply(_ credential: String, to request: inout URLRequest) {
            request.httpMethod = credential
        }
        func refresh(_ credential: String) async throws -> String { credential }
    }

    @Test func signedRequestsAreChecked() async {
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            transport: transport, authentication: Authentication(Signer(), credential: "GET\r\nX: 1"))
        await #expect(throws: CourierError.self) { try await provider.request(.plain) }
        #expect(transport.sent.isEmpty)
    }

    struct Authorized: TargetType, AccessTokenAuthorizable {
        var headers: [String: String] { [:] }
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "me" }
        var authorizationType: AuthorizationType? { .bearer }
    }

    /// URLRequest drops a header value with CR/LF without a word; the token plugin refuses it.
    @Test func accessTokensWithLineBreaksAreRefused() async {
        let transport = RecordingTransport()
        let provider = Provider<Authorized>(transport: transport, plugins: [.accessToken { _ in "abc\r\nX-Evil: 1" }])
        await #expect {
            try await provider.request(Authorized())
        } throws: { error in
            guard case CourierError.requestMapping = error else { return false }
            return true
        }
        #expect(transport.sent.isEmpty)
    }

    struct Other: TargetType {
        var headers: [String: String] { [:] }
        var baseURL: URL
        var path: String { "x" }
        var limits: Limits? = nil
    }

    @Test(arguments: ["ftp://127.0.0.1/x", "file:///etc", "gopher://h/", "ws://h/"])
    func onlyAllowedSchemesAreSent(base: String) async {
        let transport = RecordingTransferTransport(wrapping: RecordingTransport())
        let provider = Provider<Other>(transport: transport)
        await #expect {
            try await provider.request(Other(baseURL: URL(string: base)!))
        } throws: { error in
            guard case CourierError.schemeNotAllowed(let url) = error else { return false }
            return url.scheme == URL(string: base)?.scheme
        }
        #expect(transport.transfers.isEmpty)
    }

    /// A stubbed request is held to the same destination rules: a test fails where the wire would.
    @Test(arguments: ["ftp://127.0.0.1/x", "file:///etc", "gopher://h/"])
    func aStubbedRequestToASchemeNotAllowedIsRefusedToo(base: String) async {
        let provider = Provider<Other>(stubClosure: Provider.immediatelyStub)
        await #expect {
            try await provider.request(Other(baseURL: URL(string: base)!))
        } throws: { error in
            guard case CourierError.schemeNotAllowed(let url) = error else { return false }
            return url.scheme == URL(string: base)?.scheme
        }
    }

    @Test func allowedSchemesAreASetting() async throws {
        let transport = RecordingTransport()
        let httpsOnly = Limits(allowedSchemes: ["HTTPS"])
        let provider = Provider<Other>(transport: transport, limits: httpsOnly)
        await #expect(throws: CourierError.self) {
            try await provider.request(Other(baseURL: URL(string: "http://api.example.com")!))
        }
        _ = try await provider.request(Other(baseURL: URL(string: "https://api.example.com")!))
        // A target's own limits replace the provider's.
        _ = try await provider.request(
            Other(baseURL: URL(string: "http://api.example.com")!, limits: Limits(allowedSchemes: ["http"])))
        #expect(transport.sent.count == 2)
    }

    /// Trees far deeper than any API nests: a typed error, no stack overflow. (Deeper than about
    /// 10,000 levels, Swift's own recursive release of the caller's value overflows a task's stack
    /// before Courier is involved, so the tests stop at 5,000.)
    static func nested(_ depth: Int) -> ParameterValue {
        var value: ParameterValue = "leaf"
        for level in 0..<depth { value = level.isMultiple(of: 2) ? [value] : ["k": value] }
        return value
    }

    @Test(arguments: [ParameterEncoding.url, .json, .queryString])
    func deepParametersAreATypedError(encoding: ParameterEncoding) {
        struct Deep: TargetType {
            var headers: [String: String] { [:] }
            let encoding: ParameterEncoding
            let value: ParameterValue
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "deep" }
            var method: HTTPMethod { .post }
            var task: HTTPTask { .parameters(["root": value], encoding: encoding) }
        }
        for depth in [65, 1_000, 5_000] {
            #expect {
                try Endpoint(target: Deep(encoding: encoding, value: Self.nested(depth))).urlRequest()
            } throws: { error in
                guard case CourierError.limitExceeded(.parameterDepth(let limit)) = error else { return false }
                return limit == ParameterValue.maximumDepth
            }
        }
        #expect(throws: Never.self) {
            try Endpoint(target: Deep(encoding: encoding, value: Self.nested(ParameterValue.maximumDepth - 1)))
                .urlRequest()
        }
    }

    @Test func deepURLParametersOfOtherTasksAreChecked() {
        struct Deep: TargetType {
            var headers: [String: String] { [:] }
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "deep" }
            var method: HTTPMethod { .post }
            var task: HTTPTask { .compositeData(Data(), urlParameters: ["q": CarelessInputTests.nested(5_000)]) }
        }
        #expect(throws: CourierError.self) { try Endpoint(target: Deep()).urlRequest() }
    }

    @Test func retryArithmeticSaturates() {
        let policies = [
            RetryPolicy(maxAttempts: 1_000, baseDelay: .seconds(Int64.max / 4), multiplier: 1e300, jitter: .none),
            RetryPolicy(
                maxAttempts: 1_000, baseDelay: .seconds(1), multiplier: .infinity, maxDelay: .seconds(Int64.max)),
            RetryPolicy(maxAttempts: 1_000, baseDelay: .seconds(1), multiplier: .nan, maxDelay: .seconds(Int64.max)),
            RetryPolicy(maxAttempts: 1_000, baseDelay: .seconds(-5), multiplier: 2, maxDelay: .seconds(-1)),
            RetryPolicy(
                maxAttempts: Int.max, baseDelay: .seconds(Int64.max), multiplier: 1e308, maxDelay: .seconds(Int64.max)),
        ]
        let request = URLRequest(url: URL(string: "https://api.example.com")!)
        let failure = CourierError.underlying(URLError(.timedOut), nil)
        for policy in policies {
            for attempt in [1, 2, 64, 1_000, 999] {
                if case .retry(let delay) = policy.decision(after: failure, request: request, attempt: attempt) {
                    #expect(delay >= .zero)
                    #expect(delay <= max(.zero, policy.maxDelay))
                }
            }
        }
    }

    @Test(arguments: [
        "99999999999999999999999999", "9223372036854775807", "0", "-5", "1e400", "Fri, 31 Dec 9999 23:59:59 GMT",
    ])
    func retryAfterSaturates(header: String) {
        let policy = RetryPolicy(maxDelay: .seconds(Int64.max))
        let response = Response(
            statusCode: 503, data: Data(), request: nil,
            response: HTTPURLResponse(
                url: URL(string: "https://a.example")!, statusCode: 503, httpVersion: nil,
                headerFields: ["Retry-After": header]))
        let decision = policy.decision(
            after: .statusCode(response), request: URLRequest(url: URL(string: "https://a.example")!), attempt: 1)
        guard case .retry(let delay) = decision else {
            Issue.record("expected a retry")
            return
        }
        #expect(delay >= .zero)
    }
}
