import AsyncHTTPClient
import Courier
import CourierTransportConformance
import Foundation
import NIOCore
import NIOSSL
import Testing

@testable import CourierAsyncHTTPClient

/// An HTTP/2 server that completes a 2xx answer while the request body is still being sent:
/// nginx in front of httpbin's `/status/200` with the body passed on as it arrives
/// (`/unbuffered/`), so httpbin answers without reading it (nginx then resets the stream).
/// AsyncHTTPClient 1.37 traps when that happens (async-http-client#922); before the transport sent
/// requests with a body to `https` URLs over HTTP/1.1, the file and progress tests here ended the
/// test process every time. Each test that is answered early has clients of its own: over
/// HTTP/1.1 nginx closes a connection after such an answer, which must not reach other tests'
/// pools.
@Suite(.enabled(if: TLSServers.fromEnvironment != nil, "needs scripts/test's TLS servers"))
struct EarlyAnswerUploadTests {
    private let servers = TLSServers.fromEnvironment!

    struct Upload: TargetType {
        var baseURL: URL
        var path = "unbuffered/status/200"
        var method: HTTPMethod { .post }
        var headers: [String: String] { [:] }
        var task: HTTPTask
    }

    struct Small: TargetType {
        var baseURL: URL
        var path: String { "small.json" }
        var headers: [String: String] { [:] }
        var task: HTTPTask { .plain }
    }

    /// 4 MiB in a new file, removed by `body`'s end.
    private func withFile(_ body: (URL) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("early-\(UUID().uuidString)")
        try Data(repeating: 0x61, count: 4 << 20).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await body(file)
    }

    /// A transport on a client and an upload client of the test's own, as the documentation asks
    /// of a client of your own (the shared pair is chosen the same way: `UploadClientTests`), both
    /// shut down after `body`.
    private func withTransport(_ body: (AsyncHTTPClientTransport) async throws -> Void) async throws {
        let made = [HTTPSClient.make(httpVersion: .automatic), HTTPSClient.make(httpVersion: .http1Only)]
        var failure: (any Error)?
        if case (let client?, let uploads?) = (made[0], made[1]) {
            let transport = AsyncHTTPClientTransport(client: client, uploadClient: uploads)
            #expect(transport.uploadClient === uploads)
            do { try await body(transport) } catch { failure = error }
        } else {
            Issue.record("no TLS test servers")
        }
        // Every client made is shut down, whatever happened (AsyncHTTPClient traps on one that is not).
        for client in made.compactMap({ $0 }) {
            do { try await client.shutdown() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    @Test func theSharedPairSendsABodyOverHTTP1AndTheRestOverHTTP2() async throws {
        // The default path: sharedClient and sharedUploadClient, the test CA trusted per request.
        // httpbin reads the body before it answers here, so no connection is left closing.
        let transport = try AsyncHTTPClientTransport(
            trust: TrustPolicies(default: TrustPolicy(roots: .only([.pem(servers.ca)]))))
        let provider = Provider<Upload>(transport: transport)
        let posted = try await provider.request(
            Upload(baseURL: servers.url, path: "httpbin/post", task: .data(Data("{}".utf8))))
        #expect(posted.statusCode == 200)
        #expect(posted.httpVersion == "HTTP/1.1")
        #expect(
            try await Provider<Small>(transport: transport).request(Small(baseURL: servers.url)).httpVersion == "HTTP/2"
        )
    }

    /// Sends an upload nginx answers early. An answer must have come over HTTP/1.1: httpbin's 200,
    /// or nginx's 502 when httpbin closed before nginx had passed on the body. The one error
    /// allowed is a lost connection: nginx closing it while the body was still going out.
    private func expectOverHTTP1(_ send: () async throws -> Response?) async throws {
        do {
            let response = try await send()
            #expect(response?.httpVersion == "HTTP/1.1")
        } catch CourierError.underlying(let error as URLError, _) where error.code == .networkConnectionLost {}
    }

    @Test func aFileAnsweredBeforeItIsReadGoesOverHTTP1AndRequestsWithoutABodyKeepHTTP2() async throws {
        try await withTransport { transport in
            let provider = Provider<Upload>(transport: transport)
            try await withFile { file in
                for _ in 0..<4 {
                    try await expectOverHTTP1 {
                        try await provider.request(Upload(baseURL: servers.url, task: .uploadFile(file)))
                    }
                }
            }
            #expect(try await provider.request(Upload(baseURL: servers.url, task: .plain)).httpVersion == "HTTP/2")
            let get = Provider<Small>(transport: transport)
            #expect(try await get.request(Small(baseURL: servers.url)).httpVersion == "HTTP/2")
        }
    }

    @Test func aBodyInMemorySentWithProgressGoesOverHTTP1() async throws {
        try await withTransport { transport in
            let provider = Provider<Upload>(transport: transport)
            let target = Upload(baseURL: servers.url, task: .data(Data(repeating: 0x62, count: 4 << 20)))
            for _ in 0..<4 {
                try await expectOverHTTP1 {
                    var last: Response?
                    for try await event in provider.requestWithProgress(target) {
                        if let response = event.response { last = response }
                    }
                    return last
                }
            }
        }
    }

    @Test func aBodyInMemoryWithoutProgressGoesOverHTTP1Too() async throws {
        // Handed over right after the head, it is safe on HTTP/2 only while the connection can
        // take it, which a server can prevent by not reading.
        try await withTransport { transport in
            let provider = Provider<Upload>(transport: transport)
            let target = Upload(baseURL: servers.url, task: .data(Data(repeating: 0x63, count: 4 << 20)))
            for _ in 0..<4 {
                try await expectOverHTTP1 { try await provider.request(target) }
            }
        }
    }

    /// Which client each request takes, shown with an upload client that is shut down: only
    /// requests with a body to `https` URLs reach it.
    @Test func onlyRequestsWithABodyToHTTPSTakeTheUploadClient() async throws {
        let closed = HTTPClient(eventLoopGroupProvider: .singleton)
        try await closed.shutdown()
        let transport = AsyncHTTPClientTransport(client: try #require(HTTPSClient.shared), uploadClient: closed)
        let provider = Provider<Upload>(transport: transport)
        let body = HTTPTask.data(Data("{}".utf8))
        let cleartext = try #require(ConformanceServers.fromEnvironment).httpbin
        #expect(try await provider.request(Upload(baseURL: cleartext, path: "post", task: body)).statusCode == 200)
        #expect(try await provider.request(Upload(baseURL: servers.url, task: .plain)).httpVersion == "HTTP/2")
        await #expect(throws: CourierError.self) {
            try await provider.request(Upload(baseURL: servers.url, task: body))
        }
    }
}

/// Which client carries uploads, without servers.
struct UploadClientTests {
    @Test func theSharedClientGoesWithTheSharedUploadClientAndYoursWithItselfUnlessGiven() async throws {
        #expect(AsyncHTTPClientTransport().uploadClient === AsyncHTTPClientTransport.sharedUploadClient)
        #expect(AsyncHTTPClientTransport.sharedUploadClient !== AsyncHTTPClientTransport.sharedClient)
        let trusting = try AsyncHTTPClientTransport(trust: TrustPolicies())
        #expect(trusting.uploadClient === AsyncHTTPClientTransport.sharedUploadClient)
        let mine = HTTPClient(eventLoopGroupProvider: .singleton)
        let uploads = HTTPClient(eventLoopGroupProvider: .singleton)
        #expect(AsyncHTTPClientTransport(client: mine).uploadClient === mine)
        #expect(AsyncHTTPClientTransport(client: mine, uploadClient: uploads).uploadClient === uploads)
        let trustingMine = try? AsyncHTTPClientTransport(client: mine, trust: TrustPolicies())
        #expect(trustingMine?.uploadClient === mine)
        try await mine.shutdown()
        try await uploads.shutdown()
    }

    /// Only schemes AsyncHTTPClient never speaks TLS on stay on the main client with a body.
    @Test func cleartextSchemesAreTheOnesWithoutTLSInAnyCase() throws {
        for scheme in ["http", "HTTP", "http+unix", "Http+Unix", "unix"] {
            #expect(AsyncHTTPClientTransport.isCleartext(URL(string: "\(scheme)://host/path")), "\(scheme)")
        }
        for scheme in ["https", "HTTPS", "https+unix", "HTTPS+UNIX"] {
            #expect(!AsyncHTTPClientTransport.isCleartext(URL(string: "\(scheme)://host/path")), "\(scheme)")
        }
        #expect(!AsyncHTTPClientTransport.isCleartext(nil))
    }

    /// A streamed body's parts: all of it, in order, its last byte a part of its own; progress
    /// never goes back and reaches the size only with that byte.
    @Test(arguments: [1, 2, 64 << 10, (64 << 10) + 1, 200_001])
    func aStreamedBodysLastByteIsAPartOfItsOwn(size: Int) async throws {
        let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let (memoryProgress, memoryReports) = AsyncStream.makeStream(of: Int64.self)
        var fromMemory: [ByteBuffer] = []
        for try await part in DataChunks(
            data: data, progress: { Self.report($0, to: memoryReports) }, watch: nil, pacing: nil)
        {
            fromMemory.append(part)
        }
        memoryReports.finish()
        await Self.expectParts(fromMemory, of: data, progress: memoryProgress)

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("parts-\(UUID().uuidString)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (fileProgress, fileReports) = AsyncStream.makeStream(of: Int64.self)
        var fromFile: [ByteBuffer] = []
        for try await part in FileChunks(
            url: file, size: UInt64(size), progress: { Self.report($0, to: fileReports) }, watch: nil, pacing: nil)
        {
            fromFile.append(part)
        }
        fileReports.finish()
        await Self.expectParts(fromFile, of: data, progress: fileProgress)
    }

    private static func report(_ progress: TransferProgress, to reports: AsyncStream<Int64>.Continuation) {
        if case .sent(let bytes, _) = progress { reports.yield(bytes) }
    }

    private static func expectParts(_ parts: [ByteBuffer], of data: Data, progress: AsyncStream<Int64>) async {
        var sent: [Int64] = []
        for await bytes in progress { sent.append(bytes) }
        #expect(Data(parts.flatMap { $0.readableBytesView }) == data)
        #expect(parts.last?.readableBytes == 1)
        if data.count > 1 { #expect(parts.count >= 2) }
        #expect(sent.count == parts.count)
        #expect(sent == sent.sorted())
        #expect(sent.last == Int64(data.count))
        #expect(sent.dropLast().allSatisfy { $0 < Int64(data.count) })
    }
}
