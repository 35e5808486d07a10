import Foundation
import Testing

@testable import Courier

/// A backlog of many small chunks (a server that sends a byte at a time to a reader slower than
/// it: up to the 4 MiB in-memory window, four million one-byte chunks) is read back in time
/// linear in its length. Every 65th read moved all the chunks still queued to the front of the
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
}
