import Courier
import CourierTesting
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

@testable import CourierOpenAPI

/// Request bodies past `memoryThreshold` go through a temporary file, removed however the call ends.
@Suite struct RequestBodySpoolTests {
    static let server = URL(string: "https://echo.example.com")!
    static let ok = StubAnswer.data(
        Data(#"{"url":"u","data":"ok"}"#.utf8), headers: ["Content-Type": "application/json"])

    /// A folder of the test's own, so that it sees only its own spool files.
    static func makeFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-spool-test-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        return folder
    }

    static func files(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path)
    }

    /// `count` chunks of `size` bytes, each filled with its index, made one at a time as they are read.
    static func chunks(_ count: Int, of size: Int) -> HTTPBody {
        HTTPBody(GeneratedChunks(count: count, size: size), length: .unknown, iterationBehavior: .single)
    }

    static func expected(_ count: Int, of size: Int) -> Data {
        var data = Data(capacity: count * size)
        for index in 0..<count { data.append(Data(repeating: UInt8(truncatingIfNeeded: index), count: size)) }
        return data
    }

    @Test func aSmallBodyStaysInMemory() async throws {
        let folder = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = StubTransport()
        transport.on(.post, "anything", Self.ok)
        let provider = Provider<OpenAPIOperation>(transport: transport)
        let client = Client(
            serverURL: Self.server, transport: CourierTransport(provider: provider, spoolDirectory: folder))

        _ = try await client.postBytes(body: .binary(HTTPBody("small"))).ok
        let operation = try #require(transport.requests.first?.target as? OpenAPIOperation)
        #expect(operation.request.body == .data(Data("small".utf8)))
        #expect(try Self.files(in: folder).isEmpty)
    }

    @Test func aLargerBodyIsSpooledAndARetrySendsTheSameBytes() async throws {
        let folder = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = StubTransport()
        transport.on(.post, "anything", .sequence([.status(503), Self.ok]))
        let provider = Provider<OpenAPIOperation>(
            transport: transport, clock: ImmediateClock(), retryPolicy: RetryPolicy(maxAttempts: 2, methods: nil))
        let client = Client(
            serverURL: Self.server,
            transport: CourierTransport(provider: provider, memoryThreshold: 1024, spoolDirectory: folder))

        let echo = try await client.postBytes(body: .binary(Self.chunks(40, of: 10_000))).ok.body.json
        #expect(echo.data == "ok")
        let sent = transport.requests
        #expect(sent.count == 2)
        #expect(sent.map(\.body) == [Self.expected(40, of: 10_000), Self.expected(40, of: 10_000)])
        let operation = try #require(sent.first?.target as? OpenAPIOperation)
        guard case .file(let file) = operation.request.body else {
            Issue.record("expected a spooled body, got \(String(describing: operation.request.body))")
            return
        }
        #expect(file.deletingLastPathComponent().standardizedFileURL.path == folder.standardizedFileURL.path)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try Self.files(in: folder).isEmpty)
    }

    /// 64 MiB in 1 MiB chunks, made as they are read: spooled, never held whole by the transport.
    @Test func a64MiBStreamedBodyGoesThroughTheSpoolFile() async throws {
        let folder = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = StubTransport()
        transport.on(.post, "anything", Self.ok)
        let provider = Provider<OpenAPIOperation>(transport: transport)
        let client = Client(
            serverURL: Self.server, transport: CourierTransport(provider: provider, spoolDirectory: folder))

        _ = try await client.postBytes(body: .binary(Self.chunks(64, of: 1 << 20))).ok
        let request = try #require(transport.requests.first)
        let operation = try #require(request.target as? OpenAPIOperation)
        guard case .file = operation.request.body else {
            Issue.record("expected a spooled body")
            return
        }
        #expect(request.body?.count == 64 << 20)
        #expect(request.body == Self.expected(64, of: 1 << 20))
        #expect(try Self.files(in: folder).isEmpty)
    }

    @Test func aBodyGrowingPastTheLimitIsRefusedBeforeAnythingIsSent() async throws {
        let folder = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = StubTransport()
        transport.on(.post, "anything", Self.ok)
        let provider = Provider<OpenAPIOperation>(transport: transport)
        let client = Client(
            serverURL: Self.server,
            transport: CourierTransport(
                provider: provider, maxRequestBodyBytes: 1 << 20, memoryThreshold: 1024, spoolDirectory: folder))

        let error = await #expect(throws: ClientError.self) {
            _ = try await client.postBytes(body: .binary(Self.chunks(8, of: 300_000)))
        }
        #expect(error?.underlyingError as? CourierOpenAPIError == .requestBodyTooLarge(limit: 1 << 20))
        #expect(transport.requests.isEmpty)
        #expect(try Self.files(in: folder).isEmpty)
    }

    @Test func aBodyOfAKnownLengthOverTheLimitIsRefusedUnread() async throws {
        let transport = StubTransport()
        let provider = Provider<OpenAPIOperation>(transport: transport)
        let client = Client(
            serverURL: Self.server, transport: CourierTransport(provider: provider, maxRequestBodyBytes: 1024))
        let body = HTTPBody(GeneratedChunks(count: 2, size: 1024), length: .known(2048), iterationBehavior: .single)

        let error = await #expect(throws: ClientError.self) { _ = try await client.postBytes(body: .binary(body)) }
        #expect(error?.underlyingError as? CourierOpenAPIError == .requestBodyTooLarge(limit: 1024))
        #expect(transport.requests.isEmpty)
        // Not iterated: a body that can be read once is still readable.
        var read = 0
        for try await chunk in body { read += chunk.count }
        #expect(read == 2048)
    }

    @Test func aSpoolFolderThatCannotBeWrittenIsATypedErrorBeforeAnythingIsSent() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("courier-spool-missing-\(UUID())")
        let transport = StubTransport()
        let provider = Provider<OpenAPIOperation>(transport: transport)
        let client = Client(
            serverURL: Self.server,
            transport: CourierTransport(provider: provider, memoryThreshold: 10, spoolDirectory: missing))

        let error = await #expect(throws: ClientError.self) {
            _ = try await client.postBytes(body: .binary(Self.chunks(2, of: 100)))
        }
        guard case .requestBodySpoolFailed(let file, _) = error?.underlyingError as? CourierOpenAPIError else {
            Issue.record("expected requestBodySpoolFailed, got \(String(describing: error?.underlyingError))")
            return
        }
        #expect(file.deletingLastPathComponent().path == missing.path)
        #expect(transport.requests.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    @Test func aCallCancelledWhileSpoolingLeavesNoFile() async throws {
        let folder = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = StubTransport()
        transport.on(.post, "anything", Self.ok)
        let provider = Provider<OpenAPIOperation>(transport: transport)
        let client = Client(
            serverURL: Self.server,
            transport: CourierTransport(provider: provider, memoryThreshold: 1024, spoolDirectory: folder))
        let (asked, askedContinuation) = AsyncStream<Void>.makeStream()
        let body = HTTPBody(
            FirstChunkThenWait(first: ArraySlice(repeating: 7, count: 4096), asked: askedContinuation),
            length: .unknown, iterationBehavior: .single)

        let call = Task { try await client.postBytes(body: .binary(body)) }
        // The second chunk is asked for once the first one (past the threshold) is in the spool file.
        for await _ in asked { break }
        #expect(try Self.files(in: folder).count == 1)
        call.cancel()
        let result = await call.result
        #expect(throws: (any Error).self) { try result.get() }
        #expect(transport.requests.isEmpty)
        #expect(try Self.files(in: folder).isEmpty)
    }
}

/// One chunk, then, when the next one is asked for, says so and waits until its reader is cancelled.
struct FirstChunkThenWait: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk
    let first: HTTPBody.ByteChunk
    let asked: AsyncStream<Void>.Continuation

    struct AsyncIterator: AsyncIteratorProtocol {
        var first: HTTPBody.ByteChunk?
        let asked: AsyncStream<Void>.Continuation

        mutating func next() async throws -> HTTPBody.ByteChunk? {
            if let chunk = first {
                first = nil
                return chunk
            }
            asked.yield()
            // Never answers: ends (nil) when the reading task is cancelled.
            let (never, keep) = AsyncStream<Void>.makeStream()
            for await _ in never {}
            withExtendedLifetime(keep) {}
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(first: first, asked: asked) }
}

/// `count` chunks of `size` bytes, each filled with its index, made only when asked for.
struct GeneratedChunks: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk
    let count: Int
    let size: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let count: Int
        let size: Int
        var index = 0

        mutating func next() async throws -> HTTPBody.ByteChunk? {
            guard index < count else { return nil }
            defer { index += 1 }
            return ArraySlice(repeating: UInt8(truncatingIfNeeded: index), count: size)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(count: count, size: size) }
}
