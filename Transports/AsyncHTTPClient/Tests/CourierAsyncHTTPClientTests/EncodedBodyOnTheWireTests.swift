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

/// A compressed body is held to the body limit as it comes off the wire, not only once decoded:
/// a gzip body of empty stored blocks decodes to nothing, so it passed every limit on decoded
/// bytes (and the ratio check) and a server could send it without end.
@Suite struct EncodedBodyOnTheWireTests {
    /// A gzip header, then `chunks` chunks of empty stored deflate blocks (5 bytes each, none the
    /// last), handed over one at a time; counts what was pulled.
    struct NothingBody: AsyncSequence, Sendable {
        static let header: [UInt8] = [0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 0xFF]
        static let blocks = [[UInt8]](repeating: [0, 0, 0, 0xFF, 0xFF], count: 13_107).flatMap { $0 }
        let chunks: Int
        let pulls: BytesAfterTheBodyTests.Pulls
        /// What comes before the blocks: a gzip header, a zlib header, or nothing (raw deflate).
        var header = NothingBody.header

        struct AsyncIterator: AsyncIteratorProtocol {
            let sequence: NothingBody
            var index = 0

            mutating func next() async -> ByteBuffer? {
                defer { index += 1 }
                guard index <= sequence.chunks else { return nil }
                await sequence.pulls.add()
                return ByteBuffer(bytes: index == 0 ? sequence.header : NothingBody.blocks)
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(sequence: self) }
    }

    /// A body of fixed chunks.
    struct Chunks: AsyncSequence, Sendable {
        let parts: [[UInt8]]

        struct AsyncIterator: AsyncIteratorProtocol {
            var parts: IndexingIterator<[[UInt8]]>
            mutating func next() async -> ByteBuffer? { parts.next().map { ByteBuffer(bytes: $0) } }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(parts: parts.makeIterator()) }
    }

    func exchange(
        _ body: some AsyncSequence<ByteBuffer, Never> & Sendable, destination: Transfer.Destination = .memory,
        limits: Limits, encoding: String = "gzip"
    ) throws -> Exchange {
        let url = try #require(URL(string: "http://127.0.0.1/nothing"))
        let response = HTTPClientResponse(
            status: .ok, headers: HTTPHeaders([("Content-Encoding", encoding)]), body: .stream(body))
        let transfer = Transfer(request: URLRequest(url: url), destination: destination, limits: limits)
        let head = try AsyncHTTPClientTransport.head(of: response, request: transfer.request)
        return Exchange(
            transfer: transfer, response: response, head: head, redirects: 0, responseStart: nil, bytesSent: 0)
    }

    /// 4,096 chunks of 64 KiB (256 MiB) on offer; a limit of 1 MiB stops the reading within it.
    @Test func aBodyOfNothingFailsAtTheLimitInMemory() async throws {
        let pulls = BytesAfterTheBodyTests.Pulls()
        let limits = Limits(maxResponseBytes: 1 << 20)
        await #expect(
            performing: {
                _ = try await exchange(NothingBody(chunks: 4_096, pulls: pulls), limits: limits).collect()
            }, throws: exceeded(.responseBody(limit: 1 << 20)))
        // The header, 16 chunks of 65,535 bytes (just under 1 MiB, with the allowance), and the
        // one that crosses it.
        #expect(await pulls.count <= 18)
    }

    /// The same nothing in every way a body can be encoded: a zlib-wrapped or raw deflate body
    /// (raw is tried once the zlib header is refused), and gzip named in a list with `identity`.
    @Test(arguments: [
        ("deflate", [UInt8]([0x78, 0x9C])), ("deflate", []), ("gzip, identity", NothingBody.header),
        ("identity, GZIP", NothingBody.header),
    ])
    func aBodyOfNothingFailsAtTheLimitWhateverItsEncoding(encoding: String, header: [UInt8]) async throws {
        let pulls = BytesAfterTheBodyTests.Pulls()
        let limits = Limits(maxResponseBytes: 1 << 20)
        await #expect(
            performing: {
                _ = try await exchange(
                    NothingBody(chunks: 4_096, pulls: pulls, header: header), limits: limits, encoding: encoding
                ).collect()
            }, throws: exceeded(.responseBody(limit: 1 << 20)))
        #expect(await pulls.count <= 18)
    }

    /// Nothing as gzip members: each empty member (20 bytes) ends, and the next starts, so the
    /// body is never cut short, and never decodes to a byte.
    @Test func emptyGzipMembersWithoutEndFailAtTheLimit() async throws {
        let member: [UInt8] = [0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 0xFF, 0x03, 0] + [UInt8](repeating: 0, count: 8)
        let chunk = [[UInt8]](repeating: member, count: 3_276).flatMap { $0 }
        let pulls = BytesAfterTheBodyTests.Pulls()
        await #expect(
            performing: {
                _ = try await exchange(
                    FlushedEncodedBodyTests.Counted(parts: Array(repeating: chunk, count: 64), pulls: pulls),
                    limits: Limits(maxResponseBytes: 1 << 20)
                ).collect()
            }, throws: exceeded(.responseBody(limit: 1 << 20)))
        #expect(await pulls.count <= 18)
    }

    @Test func aBodyOfNothingFailsAtTheLimitToAFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("nothing")
        let pulls = BytesAfterTheBodyTests.Pulls()
        let limits = Limits(maxDownloadBytes: 1 << 20)
        await #expect(
            performing: {
                _ = try await exchange(
                    NothingBody(chunks: 4_096, pulls: pulls), destination: .file(file), limits: limits
                )
                .download(to: file)
            }, throws: exceeded(.downloadBody(limit: 1 << 20)))
        #expect(await pulls.count <= 18)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    /// The smallest limits: a body within them passes, its header and trailer (20 bytes for an
    /// empty gzip body) on the wire notwithstanding; one byte over fails on the decoded bytes.
    static let tinyAndHuge: [(limit: Int64, size: Int, passes: Bool)] = [
        (0, 0, true), (0, 1, false), (1, 1, true), (1, 2, false), (.max - 1, 1_000, true),
    ]

    @Test(arguments: tinyAndHuge)
    func tinyAndHugeLimitsHoldTheDecodedBody(limit: Int64, size: Int, passes: Bool) async throws {
        let plain = Data(repeating: 0x61, count: size)
        for windowBits: Int32 in [31, 15, -15] {
            let body = Chunks(parts: [Array(try compress(plain, windowBits: windowBits))])
            let exchange = try exchange(
                body, limits: Limits(maxResponseBytes: limit), encoding: windowBits == 31 ? "gzip" : "deflate")
            do {
                let answer = try await exchange.collect()
                #expect(passes && answer.data == plain, "\(windowBits)")
            } catch {
                guard case .limitExceeded(.responseBody(limit)) = error as? CourierError else {
                    Issue.record("\(windowBits): \(error)")
                    continue
                }
                #expect(!passes, "\(windowBits)")
            }
        }
    }

    /// Bytes compression cannot shrink come out a little larger on the wire (stored blocks, the
    /// gzip header and trailer): a body that decodes to exactly the limit still passes.
    @Test func anIncompressibleBodyAtTheLimitPasses() async throws {
        let plain = incompressible(256 << 10)
        let compressed = try compress(plain, windowBits: 31)
        #expect(compressed.count > plain.count)
        let parts = stride(from: 0, to: compressed.count, by: 16_384).map {
            Array(compressed[$0..<min($0 + 16_384, compressed.count)])
        }
        let answer = try await exchange(Chunks(parts: parts), limits: Limits(maxResponseBytes: 256 << 10)).collect()
        #expect(answer.data == plain)
    }
}
