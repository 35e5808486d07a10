import Foundation
import Testing

@testable import Courier

/// A backlog of many small chunks (a server that sends a byte at a time to a reader slower than
/// it: up to the in-memory window, about 32,000 one-byte chunks since each counts its bookkeeping,
/// four million before) is read back in time linear in its length. Every 65th read moved all the chunks still queued to the front of the
/// queue: 1.6 million one-byte chunks took 9.6 s to read as lines (0.5 s for 400,000), four
/// million about a minute.
@Suite struct ManyTinyChunksTests {
    @Test func readingABacklogOfTinyChunksMovesEachChunkAtMostOnce() async throws {
        let count = 100_000
        let (body, writer) = ResponseBody.makeStream()
        for index in 0..<count { writer.write(Data((index % 10 == 9 ? "\n" : "a").utf8)) }
        writer.finish()
        let url = URL(string: "https://api.example.com/feed")!
        let head = Response(statusCode: 200, data: Data(), request: URLRequest(url: url), response: nil)
        var lines = 0
        for try await line in ResponseStream(head: head, body: body, limits: .default).lines {
            #expect(line == "aaaaaaaaa")
            lines += 1
        }
        #expect(lines == count / 10)
        // Each queued chunk is moved at most once per time the queue halves: fewer moves than chunks.
        #expect(body.buffer.compactionMoves <= count)
    }

    /// Each chunk in memory counts its bookkeeping too: one-byte chunks fill the window after about
    /// 32,000 of them and the rest wait on disk, in order. (Before, all 4 million a 4 MiB window
    /// allowed stayed in memory, ≈ 120 MB.)
    @Test func aFloodOfTinyChunksHoldsTheWindowNotManyTimesIt() async throws {
        let count = 50_000
        let buffer = BodyBuffer(limits: .default)
        for index in 0..<count { #expect(buffer.write(Data([UInt8(index % 251)]))) }
        // About 32,000 of the 50,000 chunks stay in memory; all of them did.
        #expect(buffer.bytesInMemory < count * 2 / 3)
        #expect(buffer.bytesInMemory <= BodyBuffer.memoryWindow / (1 + BodyBuffer.chunkOverhead))
        buffer.finish()
        var received = Data()
        while let chunk = try await buffer.next() { received.append(chunk) }
        #expect(received == Data((0..<count).map { UInt8($0 % 251) }))
    }
}
