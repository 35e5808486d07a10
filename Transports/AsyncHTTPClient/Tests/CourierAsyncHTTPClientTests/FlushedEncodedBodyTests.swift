import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import Testing

@testable import CourierAsyncHTTPClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A compressed body whose bytes on the wire outnumber its decoded bytes by more than stored
/// blocks add: an encoder that flushes after every write (a proxy passing packets on, a server
/// compressing as it writes) ends each write with an empty stored block. Its decoded body within
/// the limit is the caller's limit to judge, not the encoder's overhead.
@Suite struct FlushedEncodedBodyTests {
    /// 1 MiB that does not compress, flushed every 1,400 bytes (a packet's worth), gzip and
    /// deflate: it decodes to exactly the limit, so it passes, whatever the flushes add on the wire.
    @Test(arguments: [Int32(31), 15, -15]) func aFlushedBodyAtTheLimitPasses(windowBits: Int32) async throws {
        let plain = incompressible(1 << 20)
        let compressed = try compress(plain, windowBits: windowBits, flushingEvery: 1_400)
        #expect(compressed.count > plain.count + plain.count / 1_024 + 1_024)
        let parts = stride(from: 0, to: compressed.count, by: 16_384).map {
            Array(compressed[$0..<min($0 + 16_384, compressed.count)])
        }
        let encoding = windowBits == 31 ? "gzip" : "deflate"
        let answer = try await EncodedBodyOnTheWireTests().exchange(
            EncodedBodyOnTheWireTests.Chunks(parts: parts), limits: Limits(maxResponseBytes: 1 << 20),
            encoding: encoding
        ).collect()
        #expect(answer.data == plain)
    }

    /// The same 1 MiB as gzip members of 4 KiB each (a header and trailer every 4 KiB, as a
    /// server that compresses each write on its own sends): decoded whole, within the limit.
    @Test func aBodyOfSmallMembersAtTheLimitPasses() async throws {
        let plain = incompressible(1 << 20)
        var compressed = Data()
        for start in stride(from: 0, to: plain.count, by: 4_096) {
            compressed.append(try compress(plain[start..<min(start + 4_096, plain.count)], windowBits: 31))
        }
        #expect(compressed.count > plain.count + plain.count / 1_024 + 1_024)
        let parts = stride(from: 0, to: compressed.count, by: 16_384).map {
            Array(compressed[$0..<min($0 + 16_384, compressed.count)])
        }
        let answer = try await EncodedBodyOnTheWireTests().exchange(
            EncodedBodyOnTheWireTests.Chunks(parts: parts), limits: Limits(maxResponseBytes: 1 << 20)
        ).collect()
        #expect(answer.data == plain)
    }

    /// What the hold still stops: a body that decodes to as much as it sends, then nothing without
    /// end, fails once the nothing passes the limit (the decoded bytes never do).
    @Test func dataThenNothingFailsAtTheLimit() async throws {
        let plain = incompressible(512 << 10)
        // The member goes on, with no end: empty blocks.
        let flushed = try compress(plain, windowBits: 31, finish: false)
        let nothing = [[UInt8]](repeating: [0, 0, 0, 0xFF, 0xFF], count: 13_107).flatMap { $0 }
        let parts = [Array(flushed)] + Array(repeating: nothing, count: 64)
        let pulls = BytesAfterTheBodyTests.Pulls()
        await #expect(
            performing: {
                _ = try await EncodedBodyOnTheWireTests().exchange(
                    Counted(parts: parts, pulls: pulls), limits: Limits(maxResponseBytes: 1 << 20)
                ).collect()
            }, throws: exceeded(.responseBody(limit: 1 << 20)))
        // The data (one pull), then 1 MiB and a little of nothing (17 pulls of 65,535 bytes).
        #expect(await pulls.count <= 19)
    }

    /// A body of fixed chunks, counting what was pulled.
    struct Counted: AsyncSequence, Sendable {
        let parts: [[UInt8]]
        let pulls: BytesAfterTheBodyTests.Pulls

        struct AsyncIterator: AsyncIteratorProtocol {
            let sequence: Counted
            var index = 0

            mutating func next() async -> ByteBuffer? {
                defer { index += 1 }
                guard index < sequence.parts.count else { return nil }
                await sequence.pulls.add()
                return ByteBuffer(bytes: sequence.parts[index])
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(sequence: self) }
    }
}
