import Courier
import CourierTesting
import Foundation
import Testing

/// A `GET` or `HEAD` with a body is refused before anything is sent (Apple's URLSession does not
/// send it reliably, and HTTP gives it no meaning), unless the limits allow it.
@Suite struct BodyMethodTests {
    struct Search: TargetType {
        var method: HTTPMethod
        var task: HTTPTask
        var limits: Limits? = nil
        var baseURL: URL { URL(string: "https://search.example.com")! }
        var path: String { "index/_search" }
        var headers: [String: String] { [:] }
    }

    static let bodies: [HTTPTask] = [
        .data(Data(#"{"query":{}}"#.utf8)),
        .parameters(["q": "swift"], encoding: .json),
        .compositeParameters(bodyParameters: ["q": "swift"], bodyEncoding: .json, urlParameters: ["page": 2]),
    ]

    @Test(arguments: [HTTPMethod.get, .head], bodies)
    func aBodyOnGETOrHEADIsRefusedBeforeSending(method: HTTPMethod, task: HTTPTask) async {
        let transport = StubTransport(unmatched: .throwError)
        let provider = Provider<Search>(transport: transport)
        await #expect {
            try await provider.request(Search(method: method, task: task))
        } throws: { error in
            guard case CourierError.requestMapping(let message) = error else { return false }
            return message.contains(method.rawValue) && message.contains("allowsBodyInGETAndHEAD")
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func sampleResponsesAreRefusedTheSameWay() async {
        let provider = Provider<Search>(stubClosure: Provider.immediatelyStub)
        await #expect(throws: CourierError.self) {
            try await provider.request(Search(method: .get, task: .data(Data("x".utf8))))
        }
    }

    @Test func theLimitsLetItThroughForAProviderOrATarget() async throws {
        let transport = StubTransport()
        transport.on(.get, "index/_search", .status(200))
        let allowing = Limits(allowsBodyInGETAndHEAD: true)
        let provider = Provider<Search>(transport: transport, limits: allowing)
        _ = try await provider.request(Search(method: .get, task: .data(Data(#"{"query":{}}"#.utf8))))
        let strict = Provider<Search>(transport: transport)
        _ = try await strict.request(Search(method: .get, task: .data(Data("{}".utf8)), limits: allowing))
        #expect(transport.requests.count == 2)
        #expect(transport.requests.first?.body == Data(#"{"query":{}}"#.utf8))
    }

    /// A plugin that rewrites the method after the request was built.
    struct Rewrite: Plugin {
        let method: String
        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            var request = request
            request.httpMethod = method
            return request
        }
    }

    /// The body of a file or multipart upload is not in the request, and a plugin's `prepare` can
    /// turn its POST into a GET or HEAD: the check on the request that goes on the wire refuses
    /// it, whatever the limits (it was sent before).
    @Test(arguments: ["GET", "get", "HEAD", "TRACE"], [false, true])
    func anUploadWhoseMethodAPluginTurnsIntoGETIsRefused(method: String, allowing: Bool) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID()).txt")
        try Data("upload".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let form = MultipartFormData(parts: [.init(name: "log", fileURL: file)], memoryThreshold: 0)
        for task in [HTTPTask.uploadFile(file), .uploadMultipart(form)] {
            let transport = StubTransport()
            transport.on({ _ in true }, .status(200))
            let provider = Provider<Search>(
                transport: transport, plugins: [Rewrite(method: method)],
                limits: Limits(allowsBodyInGETAndHEAD: allowing))
            await #expect {
                try await provider.request(Search(method: .post, task: task))
            } throws: { error in
                guard case CourierError.requestMapping(let message) = error else { return false }
                return message.contains("carries no body")
            }
            #expect(transport.requests.isEmpty)
        }
    }

    @Test func bodilessGETAndBodiesOnOtherMethodsAreUnaffected() async throws {
        let transport = StubTransport()
        transport.on({ _ in true }, .status(200))
        let provider = Provider<Search>(transport: transport)
        _ = try await provider.request(Search(method: .get, task: .plain))
        _ = try await provider.request(Search(method: .get, task: .parameters(["q": "swift"], encoding: .url)))
        _ = try await provider.request(Search(method: .post, task: .data(Data("{}".utf8))))
        _ = try await provider.request(Search(method: .delete, task: .data(Data("{}".utf8))))
        #expect(transport.requests.count == 4)
    }
}
