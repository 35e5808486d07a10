import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import CourierAsyncHTTPClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A body read into memory (issue 29: a body of one network chunk is kept in AsyncHTTPClient's
/// buffer and copied once, a longer one gathered as it arrives): every byte arrives, in order,
/// whatever the chunks, and progress and limits see each chunk.
@Suite struct ExchangeTests {
    /// Chunks handed over one by one, as AsyncHTTPClient hands over a body.
    struct Chunks: AsyncSequence, Sendable {
        let parts: [[UInt8]]

        struct AsyncIterator: AsyncIteratorProtocol {
            var rest: IndexingIterator<[[UInt8]]>
            mutating func next() async -> ByteBuffer? { rest.next().map { ByteBuffer(bytes: $0) } }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rest: parts.makeIterator()) }
    }

    /// The body collected from these chunks, with the progress reported.
    func collect(
        _ parts: [[UInt8]], contentLength: Int? = nil, limits: Limits = .default,
        headers extra: [(String, String)] = []
    ) async throws -> (Data, [TransferProgress]) {
        let url = try #require(URL(string: "http://127.0.0.1/body"))
        var headers = HTTPHeaders()
        if let contentLength { headers.add(name: "Content-Length", value: "\(contentLength)") }
        headers.add(contentsOf: extra)
        let response = HTTPClientResponse(status: .ok, headers: headers, body: .stream(Chunks(parts: parts)))
        let (events, reports) = AsyncStream<TransferProgress>.makeStream()
        let transfer = Transfer(
            request: URLRequest(url: url), progress: { event in reports.yield(event) }, limits: limits)
        let head = try AsyncHTTPClientTransport.head(of: response, request: transfer.request)
        let exchange = Exchange(
            transfer: transfer, response: response, head: head, redirects: 0, responseStart: nil, bytesSent: 0)
        exchange.reportStart()  // as the transport does when the answer's head arrives
        let answer: Response
        do {
            answer = try await exchange.collect()
        } catch {
            reports.finish()
            throw error
        }
        reports.finish()
        #expect(answer.transferMetrics?.bytesReceived == Int64(answer.data.count))
        var reported: [TransferProgress] = []
        for await event in events { reported.append(event) }
        return (answer.data, reported)
    }

    static func bytes(_ count: Int, from start: Int = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 + start) &* 31 &+ 7) }
    }

    @Test func aBodyOfOneChunkOfExactlyItsLengthArrivesWhole() async throws {
        let body = Self.bytes(59)
        let (data, events) = try await collect([body], contentLength: body.count)
        #expect(data == Data(body))
        #expect(events == [.responseStarted(expectedLength: 59), .received(bytes: 59)])
    }

    @Test func aBodyOfManyChunksArrivesWholeAndInOrder() async throws {
        let parts = [
            Self.bytes(1), [], Self.bytes(4096, from: 1), Self.bytes(3, from: 4097), Self.bytes(70_000, from: 4100),
        ]
        let whole = parts.flatMap { $0 }
        for length in [whole.count, nil] {
            let (data, events) = try await collect(parts, contentLength: length)
            #expect(data == Data(whole))
            #expect(
                events == [
                    .responseStarted(expectedLength: length.map(Int64.init)), .received(bytes: 1),
                    .received(bytes: 4097), .received(bytes: 4100), .received(bytes: Int64(whole.count)),
                ])
        }
    }

    @Test func anEmptyFirstChunkIsNotTheBody() async throws {
        let body = Self.bytes(20)
        let (data, _) = try await collect([[], body, []])
        #expect(data == Data(body))
    }

    @Test func noChunksIsAnEmptyBody() async throws {
        let (data, events) = try await collect([], contentLength: 0)
        #expect(data.isEmpty)
        #expect(events == [.responseStarted(expectedLength: 0)])
    }

    @Test func aLimitCrossedByALaterChunkIsAnError() async throws {
        var limits = Limits.default
        limits.maxResponseBytes = 100
        await #expect(throws: CourierError.self) {
            _ = try await collect([Self.bytes(60), Self.bytes(60)], limits: limits)
        }
        let (data, _) = try await collect([Self.bytes(60), Self.bytes(40, from: 60)], limits: limits)
        #expect(data == Data(Self.bytes(100)))
    }

    /// `Content-Length` and `Content-Encoding` are read from the head, by the rules every transport
    /// shares (digits only; repeated fields joined), not from AsyncHTTPClient's first field of the
    /// name: a length with a sign, or two lengths, is no length (the body is still read whole).
    @Test(arguments: [["+10"], ["10", "10"], ["1e1"], [" 10"]])
    func aLengthThatIsNotDigitsIsNotAnnounced(values: [String]) async throws {
        let body = Self.bytes(10)
        let (data, events) = try await collect([body], headers: values.map { ("content-LENGTH", $0) })
        #expect(data == Data(body))
        let announced: Int64? = values == [" 10"] ? 10 : nil
        #expect(events == [.responseStarted(expectedLength: announced), .received(bytes: 10)])
    }

    @Test func requestHeaderNamesAreMatchedWithoutRegardToCase() {
        for name in ["Content-Length", "content-length", "CONTENT-LENGTH", "cOnTeNt-LeNgTh"] {
            #expect(AsyncHTTPClientTransport.isNamed(name, "content-length"))
        }
        for name in ["Content-Lengths", "Content-Lengt", "Content_Length", "", "Content-Type"] {
            #expect(!AsyncHTTPClientTransport.isNamed(name, "content-length"))
        }
    }

    /// One chunk, then a wait that only a cancel ends; says when the second chunk is asked for
    /// (the first one is in the file by then).
    struct OneThenHold: AsyncSequence, Sendable {
        let askedAgain: AsyncStream<Void>.Continuation
        let hold: AsyncStream<Void>
        /// Kept so `hold` never finishes on its own.
        let holdOpen: AsyncStream<Void>.Continuation

        struct AsyncIterator: AsyncIteratorProtocol {
            let source: OneThenHold
            var sent = false
            mutating func next() async throws -> ByteBuffer? {
                if !sent {
                    sent = true
                    return ByteBuffer(bytes: [1, 2, 3])
                }
                source.askedAgain.yield()
                for await _ in source.hold {}
                try Task.checkCancellation()
                return nil
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: self) }
    }

    /// A download cancelled while its body arrives leaves no file: the removal ran through
    /// `runIfActive`, which skips the work of a cancelled task. Found by review.
    @Test func aCancelledDownloadLeavesNoFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).part")
        defer { try? FileManager.default.removeItem(at: file) }
        let (asked, askedAgain) = AsyncStream<Void>.makeStream()
        let (hold, holdOpen) = AsyncStream<Void>.makeStream()
        defer { holdOpen.finish() }
        let response = HTTPClientResponse(
            status: .ok, headers: [:],
            body: .stream(OneThenHold(askedAgain: askedAgain, hold: hold, holdOpen: holdOpen)))
        var transfer = Transfer(
            request: URLRequest(url: try #require(URL(string: "http://127.0.0.1/file"))), progress: nil,
            limits: .default)
        transfer.destination = .file(file)
        let head = try AsyncHTTPClientTransport.head(of: response, request: transfer.request)
        let exchange = Exchange(
            transfer: transfer, response: response, head: head, redirects: 0, responseStart: nil, bytesSent: 0)
        let download = Task { try await exchange.download(to: file) }
        var askedIterator = asked.makeAsyncIterator()
        _ = await askedIterator.next()
        #expect(FileManager.default.fileExists(atPath: file.path))
        download.cancel()
        await #expect(throws: (any Error).self) { try await download.value }
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    /// A body set as an `httpBodyStream` is refused with a typed error before anything is sent,
    /// rather than sent as an empty body the caller is answered for. Found by review.
    @Test func aBodyStreamIsRefusedBeforeSending() async throws {
        var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:9/upload")))
        request.httpMethod = "POST"
        request.httpBodyStream = InputStream(data: Data("streamed".utf8))
        let error = await #expect(throws: CourierError.self) {
            try await AsyncHTTPClientTransport().send(Transfer(request: request, progress: nil, limits: .default))
        }
        guard case .invalidUse(let message)? = error else {
            Issue.record("expected invalidUse, got \(String(describing: error))")
            return
        }
        #expect(message == AsyncHTTPClientTransport.bodyStreamMessage)
    }

    /// A compressed body whose one network chunk inflates to 32 MiB reaches a stream's reader in
    /// slices of a few MiB, not whole (it went past the memory a stream is held to). Found by
    /// review.
    @Test func aChunkThatInflatesALotComesOutInSlices() async throws {
        let whole = 32 << 20
        let bomb = try compress(Data(count: whole), windowBits: 31)
        let response = HTTPClientResponse(
            status: .ok, headers: ["Content-Encoding": "gzip"], body: .stream(Chunks(parts: [Array(bomb)])))
        let transfer = Transfer(
            request: URLRequest(url: try #require(URL(string: "http://127.0.0.1/bomb"))), progress: nil,
            limits: Limits(maxResponseBytes: .max, maxDecompressionRatio: .max))
        let head = try AsyncHTTPClientTransport.head(of: response, request: transfer.request)
        let exchange = Exchange(
            transfer: transfer, response: response, head: head, redirects: 0, responseStart: nil, bytesSent: 0)
        var total = 0
        var largest = 0
        for try await chunk in exchange.stream().body {
            total += chunk.count
            largest = max(largest, chunk.count)
        }
        #expect(total == whole)
        // At most DEFLATE's largest ratio (1,032) times a slice.
        #expect(largest <= 1_032 * Exchange.inflatedSlice + Inflater.pieceSize)
        #expect(largest < whole / 4)
    }
}
