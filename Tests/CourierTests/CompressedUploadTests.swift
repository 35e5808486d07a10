import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Compressed uploads (`TargetType.requestCompression`) through the pipeline: what is sent, when,
/// and what is left behind. The bytes are compared with `RequestCompressor.compress`, whose output
/// Python's zlib inflates in `CompressionTests`; the conformance suite inflates them on a server.
@Suite(.timeLimit(.minutes(2))) struct CompressedUploadTests {
    struct Upload: TargetType {
        var baseURL: URL { URL(string: "https://upload.example.com")! }
        var path: String { "upload" }
        var method: HTTPMethod = .post
        var task: HTTPTask
        var headers: [String: String] = [:]
        var requestCompression: RequestCompression? = .gzip
        var retryPolicy: RetryPolicy?
        var validation: ValidationType { retryPolicy == nil ? .none : .successCodes }
    }

    /// Text that compresses well: 100 KiB of JSON-like lines.
    static var text: Data {
        Data(String(repeating: "{\"name\":\"Ada\",\"id\":42,\"tags\":[\"a\",\"b\"]}\n", count: 2_500).utf8)
    }

    /// Compressed off the cooperative pool: seconds of work under a sanitizer.
    static func compressed(_ body: Data, _ coding: RequestCompression.Coding) async throws -> Data {
        try await offThePool { RequestCompressor.compress(body, coding: coding, isCancelled: { false }) ?? Data() }
    }

    @Test(arguments: RequestCompression.Coding.allCases)
    func anInMemoryBodyIsSentCompressedWithItsHeaders(coding: RequestCompression.Coding) async throws {
        let transport = StubTransport()
        transport.on(.post, "upload", .status(200))
        let body = Self.text
        let target = Upload(task: .data(body), requestCompression: RequestCompression(coding))
        _ = try await Provider<Upload>(transport: transport).request(target)
        let sent = try #require(transport.requests.first)
        let expected = try await Self.compressed(body, coding)
        #expect(sent.body == expected)
        #expect(expected.count < body.count / 4)
        #expect(sent.request.value(forHTTPHeaderField: "Content-Encoding") == coding.rawValue)
        #expect(sent.request.value(forHTTPHeaderField: "Content-Length") == String(expected.count))
    }

    @Test func aBodyBelowTheMinimumIsSentAsIs() async throws {
        let transport = StubTransport()
        transport.on(.post, "upload", .status(200))
        let provider = Provider<Upload>(transport: transport)
        let small = Data(repeating: 0x61, count: 999)
        _ = try await provider.request(
            Upload(task: .data(small), requestCompression: .init(.gzip, minimumBytes: 1_000)))
        // At the minimum, it is compressed.
        let atMinimum = Data(repeating: 0x61, count: 1_000)
        _ = try await provider.request(
            Upload(task: .data(atMinimum), requestCompression: .init(.gzip, minimumBytes: 1_000)))
        // Off (the default): never.
        _ = try await provider.request(Upload(task: .data(Self.text), requestCompression: nil))
        let sent = transport.requests
        try #require(sent.count == 3)
        #expect(sent[0].body == small)
        #expect(sent[0].request.value(forHTTPHeaderField: "Content-Encoding") == nil)
        let compressed = try await Self.compressed(atMinimum, .gzip)
        #expect(sent[1].body == compressed)
        #expect(sent[1].request.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(sent[2].body == Self.text)
        #expect(sent[2].request.value(forHTTPHeaderField: "Content-Encoding") == nil)
        #expect(RequestCompression.gzip.minimumBytes == RequestCompression.defaultMinimumBytes)
        #expect(MultiTarget(Upload(task: .plain, requestCompression: .deflate)).requestCompression == .deflate)
        #expect(TestAPI.plain.requestCompression == nil)
        #expect(RequestCompression(.deflate, minimumBytes: -5).minimumBytes == 0)
        // Set below zero after `init`: every body is compressed, and nothing traps. Found by review.
        var negative = RequestCompression.gzip
        negative.minimumBytes = -1
        #expect(negative.applies(toLength: 0))
        #expect(negative.applies(toLength: 10))
    }

    /// Found by review: `identity` (or an empty value) was refused as "already encoded", where
    /// `ContentCoding` reads it as not encoded. The body is compressed and the header replaced.
    @Test(arguments: ["identity", "Identity", " identity , ", ""])
    func anIdentityContentEncodingIsReplaced(value: String) async throws {
        let transport = StubTransport()
        transport.on(.post, "upload", .status(200))
        let provider = Provider<Upload>(transport: transport)
        _ = try await provider.request(Upload(task: .data(Self.text), headers: ["Content-Encoding": value]))
        let sent = try #require(transport.requests.first)
        #expect(sent.request.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(sent.body == (try await Self.compressed(Self.text, .gzip)))
    }

    @Test func aRequestThatAlreadyHasAContentEncodingIsRefused() async throws {
        let transport = StubTransport(unmatched: .throwError)
        let provider = Provider<Upload>(transport: transport)
        // Whatever the body's size: a small body in a test does not hide it.
        for body in [Self.text, Data("x".utf8)] {
            let target = Upload(task: .data(body), headers: ["Content-Encoding": "br"])
            await #expect {
                try await provider.request(target)
            } throws: { error in
                guard case .requestCompression(.alreadyEncoded(let coding)) = error as? CourierError else {
                    return false
                }
                return coding == "br" && "\(error)".contains("Content-Encoding 'br'")
            }
        }
        #expect(transport.requests.isEmpty)
        // A request without a body has nothing to compress.
        transport.on(.get, "upload", .status(200))
        _ = try await provider.request(Upload(method: .get, task: .plain, headers: ["Content-Encoding": "br"]))
        #expect(transport.requests.count == 1)
    }

    @Test func aBodyStreamIsRefused() async throws {
        let transport = StubTransport(unmatched: .throwError)
        let provider = Provider<Upload>(
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                request.httpBodyStream = InputStream(data: Self.text)
                return request
            }, transport: transport)
        await #expect {
            try await provider.request(Upload(task: .plain))
        } throws: { error in
            guard case .requestCompression(.bodyStream) = error as? CourierError else { return false }
            return true
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func aRetryResendsTheSameCompressedBytesCompressedOnce() async throws {
        let transport = StubTransport()
        transport.on(.post, "upload", .sequence([.status(503), .status(503), .status(200)]))
        let mappings = Locked(0)
        let provider = Provider<Upload>(
            requestClosure: { endpoint in
                mappings.withLock { $0 += 1 }
                return try endpoint.urlRequest()
            }, transport: transport)
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: .zero, jitter: .none, methods: nil)
        let response = try await provider.request(Upload(task: .data(Self.text), retryPolicy: policy))
        #expect(response.statusCode == 200)
        let bodies = transport.requests.map(\.body)
        #expect(bodies.count == 3)
        #expect(Set(bodies).count == 1)
        let compressed = try await Self.compressed(Self.text, .gzip)
        #expect(bodies.first == compressed)
        #expect(mappings.withLock { $0 } == 1)
    }

    /// Signs the body it is given: the CRC-32 of `httpBody` in a header.
    struct SigningPlugin: Plugin {
        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            var request = request
            let body = request.httpBody ?? Data()
            request.setValue(String(Checksums.crc32(body), radix: 16), forHTTPHeaderField: "X-Body-Signature")
            request.setValue(
                request.value(forHTTPHeaderField: "Content-Encoding"), forHTTPHeaderField: "X-Signed-Coding")
            return request
        }
    }

    @Test func aSigningPluginSeesTheCompressedBytes() async throws {
        let transport = StubTransport()
        transport.on(.post, "upload", .status(200))
        let provider = Provider<Upload>(transport: transport, plugins: [SigningPlugin()])
        _ = try await provider.request(Upload(task: .data(Self.text), requestCompression: .deflate))
        let sent = try #require(transport.requests.first)
        let body = try #require(sent.body)
        let compressed = try await Self.compressed(Self.text, .deflate)
        #expect(body == compressed)
        #expect(sent.request.value(forHTTPHeaderField: "X-Body-Signature") == String(Checksums.crc32(body), radix: 16))
        #expect(sent.request.value(forHTTPHeaderField: "X-Signed-Coding") == "deflate")
    }

    /// Records each transfer's file body and whether it existed while it was sent.
    final class FileBodyTransport: Transport {
        let seen = Locked<[(URL, Bool)]>([])
        let status: Int

        init(status: Int = 200) {
            self.status = status
        }

        func send(_ transfer: Transfer) async throws -> Response {
            if case .file(let url) = transfer.body {
                seen.withLock { $0.append((url, FileManager.default.fileExists(atPath: url.path))) }
            }
            return try await transfer.sendBuffered { request in
                Response(statusCode: self.status, data: Data(), request: request)
            }
        }
    }

    @Test(arguments: [200, 500])
    func aFileBodyIsCompressedIntoATemporaryFileRemovedAfterTheCall(status: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-gzip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("body.json")
        // Several 64 KiB blocks and a part of one.
        var content = Data()
        while content.count < 300_001 { content.append(Self.text) }
        content = content.prefix(300_001)
        try content.write(to: file)
        let transport = FileBodyTransport(status: status)
        let recorder = StubTransport()
        recorder.on(.post, "upload", .status(status))
        for (provider, isRecorder) in [
            (Provider<Upload>(transport: transport), false), (Provider<Upload>(transport: recorder), true),
        ] {
            let statusCode: Int?
            do {
                statusCode = try await provider.request(Upload(task: .uploadFile(file), requestCompression: .gzip))
                    .statusCode
            } catch {
                statusCode = error.response?.statusCode
            }
            #expect(statusCode == status)
            if isRecorder {
                let sent = try #require(recorder.requests.first)
                let compressed = try await Self.compressed(content, .gzip)
                #expect(sent.body == compressed)
                #expect(sent.request.value(forHTTPHeaderField: "Content-Length") == String(sent.body?.count ?? -1))
                #expect(sent.request.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
            }
        }
        let seen = transport.seen.withLock { $0 }
        try #require(seen.count == 1)
        let (sentFile, existed) = seen[0]
        #expect(existed)
        #expect(sentFile != file)
        #expect(sentFile.path.hasPrefix(FileManager.default.temporaryDirectory.standardizedFileURL.path))
        #expect(!FileManager.default.fileExists(atPath: sentFile.path), "the compressed body was left behind")
        // The caller's file is untouched.
        #expect(try Data(contentsOf: file) == content)
    }

    @Test func aLargeMultipartBodyIsCompressedWhileItStreams() async throws {
        let form = MultipartFormData(
            parts: [.init(name: "title", data: Data("Notes".utf8)), .init(name: "notes", data: Self.text)],
            memoryThreshold: 1_024)
        let transport = FileBodyTransport()
        let recorder = StubTransport()
        recorder.on(.post, "upload", .status(200))
        _ = try await Provider<Upload>(transport: transport).request(Upload(task: .uploadMultipart(form)))
        _ = try await Provider<Upload>(transport: recorder).request(Upload(task: .uploadMultipart(form)))
        let sent = try #require(recorder.requests.first)
        let plain = try await form.encodedBody(maxBytes: 1 << 20)
        let compressed = try await Self.compressed(plain, .gzip)
        #expect(sent.body == compressed)
        #expect(sent.request.value(forHTTPHeaderField: "Content-Length") == String(sent.body?.count ?? -1))
        #expect(sent.request.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("multipart/form-data") == true)
        let seen = transport.seen.withLock { $0 }
        try #require(seen.count == 1)
        #expect(!FileManager.default.fileExists(atPath: seen[0].0.path))
    }

    @Test func aCancelledCallLeavesNoCompressedFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-gzip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("body.bin")
        try Data(repeating: 7, count: 200_000).write(to: file)
        let holding = HoldingTransport()
        let provider = Provider<Upload>(transport: holding)
        let call = Task { try await provider.request(Upload(task: .uploadFile(file))) }
        var reached = holding.reached.makeAsyncIterator()
        let sentFile = try #require(await reached.next() ?? nil)
        #expect(FileManager.default.fileExists(atPath: sentFile.path))
        call.cancel()
        _ = await call.result
        #expect(!FileManager.default.fileExists(atPath: sentFile.path))
    }
}

/// Holds every transfer until its task is cancelled, and tells the test the file body it got.
final class HoldingTransport: Transport {
    let reached: AsyncStream<URL?>
    private let continuation: AsyncStream<URL?>.Continuation

    init() {
        (reached, continuation) = AsyncStream.makeStream()
    }

    func send(_ transfer: Transfer) async throws -> Response {
        continuation.yield(transfer.body.fileURL)
        // Holds until the call is cancelled: no sleep, a stream that ends when the task is.
        let (cancelled, ends) = AsyncStream<Void>.makeStream()
        await withTaskCancellationHandler {
            for await _ in cancelled {}
        } onCancel: {
            ends.finish()
        }
        throw CancellationError()
    }
}
