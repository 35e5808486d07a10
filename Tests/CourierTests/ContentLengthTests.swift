import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request's own `Content-Length` must be the body's length: otherwise the server reads another
/// length than the one sent, and the bytes left over become the start of the next request on the
/// connection (request smuggling), or the server waits for bytes that never come. Refused before
/// anything is sent.
@Suite(.timeLimit(.minutes(1))) struct ContentLengthTests {
    struct Upload: TargetType {
        var task: HTTPTask
        var headers: [String: String]
        var method: HTTPMethod = .post
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "upload" }
    }

    static func withFile(bytes: Int, _ body: (URL) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cl-\(UUID().uuidString)")
        try Data(repeating: 0x41, count: bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await body(file)
    }

    /// Computed, not stored: a static holding a heap `Data` is reported by LeakSanitizer.
    static var refused: [(task: HTTPTask, headers: [String: String])] {
        [
            (.data(Data(repeating: 0x42, count: 100)), ["Content-Length": "10"]),  // the rest smuggled
            (.data(Data(repeating: 0x42, count: 10)), ["Content-Length": "100"]),  // waits for bytes
            (.plain, ["Content-Length": "10"]),
            (.data(Data("x".utf8)), ["Content-Length": "+1"]),
            (.data(Data("x".utf8)), ["Content-Length": "1, 1"]),
            (.data(Data("x".utf8)), ["Content-Length": "18446744073709551617"]),
            (.data(Data("x".utf8)), ["Content-Length": "1", "Transfer-Encoding": "chunked"]),
            (.data(Data(repeating: 0x42, count: 1000)), ["Content-Length": "1e3"]),
            (.data(Data("x".utf8)), ["Content-Length": "\u{FF11}"]),  // a fullwidth digit
            (.data(Data("x".utf8)), ["Content-Length": "-1"]),
            (.data(Data("x".utf8)), ["Content-Length": ""]),
            // Spaces around it: refused by HTTP/2 and by nginx (400), so refused before it is sent.
            (.data(Data("hello world!".utf8)), ["Content-Length": " 12 "]),
            (.data(Data("hello world!".utf8)), ["Content-Length": "\t12"]),
        ]
    }

    @Test(arguments: 0..<refused.count)
    func aContentLengthThatIsNotTheBodysIsRefused(index: Int) async {
        let transport = StubTransport(unmatched: .throwError)
        let provider = Provider<Upload>(transport: transport)
        let (task, headers) = Self.refused[index]
        await #expect {
            try await provider.request(Upload(task: task, headers: headers))
        } throws: { error in
            guard case CourierError.requestMapping(let message) = error else { return false }
            return message.contains("Content-Length")
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func aMatchingContentLengthIsSent() async throws {
        let transport = StubTransport().on({ _ in true }, .status(204))
        let provider = Provider<Upload>(transport: transport)
        _ = try await provider.request(Upload(task: .data(Data("hello".utf8)), headers: ["Content-Length": "5"]))
        _ = try await provider.request(Upload(task: .plain, headers: ["Content-Length": "0"]))
        try await Self.withFile(bytes: 100) { file in
            _ = try await provider.request(Upload(task: .uploadFile(file), headers: ["Content-Length": "100"]))
        }
        #expect(transport.requests.count == 3)
    }

    @Test func aFileUploadWhoseContentLengthIsNotTheFilesIsRefused() async throws {
        let transport = StubTransport(unmatched: .throwError)
        let provider = Provider<Upload>(transport: transport)
        try await Self.withFile(bytes: 100) { file in
            await #expect {
                try await provider.request(Upload(task: .uploadFile(file), headers: ["Content-Length": "10"]))
            } throws: { error in
                guard case CourierError.requestMapping(let message) = error else { return false }
                return message.contains("100")
            }
        }
        #expect(transport.requests.isEmpty)
    }

    /// Leading zeros are `1*DIGIT` (RFC 9110 §8.6): a length the server reads as the body's, so
    /// it is sent.
    @Test func aZeroLedContentLengthOfTheBodysLengthIsSent() async throws {
        let transport = StubTransport().on({ _ in true }, .status(204))
        let provider = Provider<Upload>(transport: transport)
        _ = try await provider.request(
            Upload(task: .data(Data("hello world!".utf8)), headers: ["Content-Length": "012"]))
        _ = try await provider.request(Upload(task: .plain, headers: ["Content-Length": "0"], method: .get))
        #expect(transport.requests.count == 2)
    }

    /// A GET without a body that announces one would make the server wait for bytes never sent.
    @Test func aGETWithoutABodyAnnouncingOneIsRefused() async {
        let transport = StubTransport(unmatched: .throwError)
        let provider = Provider<Upload>(transport: transport)
        await #expect {
            try await provider.request(Upload(task: .plain, headers: ["Content-Length": "12"], method: .get))
        } throws: { error in
            guard case CourierError.requestMapping(let message) = error else { return false }
            return message.contains("Content-Length")
        }
        #expect(transport.requests.isEmpty)
    }

    /// The final request is checked after every stage: a plugin that sets a wrong length after the
    /// target's headers were checked is refused as well.
    @Test func aContentLengthSetByAPluginIsChecked() async {
        struct Lengthening: Plugin {
            func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
                var request = request
                request.setValue("99", forHTTPHeaderField: "Content-Length")
                return request
            }
        }
        let transport = StubTransport(unmatched: .throwError)
        let provider = Provider<Upload>(transport: transport, plugins: [Lengthening()])
        await #expect {
            try await provider.request(Upload(task: .data(Data("hello".utf8)), headers: [:]))
        } throws: { error in
            guard case CourierError.requestMapping(let message) = error else { return false }
            return message.contains("Content-Length")
        }
        #expect(transport.requests.isEmpty)
    }

    /// Header fields whose names differ only in case: every `Content-Length` is seen, not only the
    /// one a case-insensitive lookup happens to find first (which let `["5", "50"]` go out). Where
    /// the request keeps both fields (FoundationNetworking does) it is refused, even with equal
    /// values; where it keeps one, that one must be the body's length.
    @Test(arguments: [
        ["Content-Length": "5", "content-length": "50"], ["Content-Length": "50", "content-length": "5"],
        ["Content-Length": "5", "content-length": "5"],
    ])
    func twoContentLengthsDifferingInCaseSendNoWrongLength(fields: [String: String]) async throws {
        struct Doubling: Plugin {
            let fields: [String: String]
            func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
                var request = request
                request.allHTTPHeaderFields = fields
                return request
            }
        }
        let transport = StubTransport().on({ _ in true }, .status(204))
        let provider = Provider<Upload>(transport: transport, plugins: [Doubling(fields: fields)])
        let upload = Upload(task: .data(Data("hello".utf8)), headers: [:])
        let outcome: Result<Response, CourierError>
        do throws(CourierError) {
            outcome = .success(try await provider.request(upload))
        } catch {
            outcome = .failure(error)
        }
        if case .failure(let error) = outcome {
            #expect("\(error)".contains("Content-Length"))
            #expect(transport.requests.isEmpty)
        } else {
            let sent = transport.requests.first?.request.allHTTPHeaderFields ?? [:]
            #expect(sent.filter { $0.key.lowercased() == "content-length" }.map { $0.value } == ["5"])
        }
    }
}
