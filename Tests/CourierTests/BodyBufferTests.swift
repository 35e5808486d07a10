import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct BodyBufferTests {
    @Test func aSlowReaderSpillsToDiskInOrderWithinTheMemoryWindow() async throws {
        let buffer = BodyBuffer(limits: .default)
        let chunkSize = 64 << 10
        let count = 160  // 10 MiB: more than twice the memory window
        for index in 0..<count {
            #expect(buffer.write(Data(repeating: UInt8(index % 251), count: chunkSize)))
            #expect(buffer.bytesInMemory <= BodyBuffer.memoryWindow)
        }
        buffer.finish()
        var received = Data()
        while let chunk = try await buffer.next() { received.append(chunk) }
        var expected = Data()
        for index in 0..<count { expected.append(Data(repeating: UInt8(index % 251), count: chunkSize)) }
        #expect(received == expected)
        buffer.terminate()
    }

    @Test func theBacklogIsBounded() async throws {
        let buffer = BodyBuffer(limits: Limits(maxStreamBacklogBytes: 100))
        #expect(buffer.write(Data(count: 60)))
        #expect(!buffer.write(Data(count: 60)))
        await #expect {
            while try await buffer.next() != nil {}
        } throws: { error in
            if case CourierError.limitExceeded(.streamBacklog(limit: 100)) = error { return true }
            return false
        }
    }

    @Test func noSpillFileIsEverVisible() async throws {
        let folder = FileManager.default.temporaryDirectory
        func spills() throws -> Set<String> {
            Set(
                try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
                    $0.hasPrefix("courier-stream-")
                })
        }
        let before = try spills()
        let buffer = BodyBuffer(limits: .default)
        for _ in 0..<100 { buffer.write(Data(count: 64 << 10)) }
        #expect(try spills() == before)
        buffer.terminate()
    }
}
