import Foundation
import Testing

@testable import Courier

/// The download writer: batches written off the delegate queue, in order; a slow disk never makes
/// `append` wait, and makes `waitForDisk` wait only while it is more than the window behind.
@Suite(.timeLimit(.minutes(1))) struct FileSinkTests {
    /// A disk that takes nothing until opened.
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let calls = Locked(0)

        var writes: Int { calls.withLock { $0 } }

        func writer() -> FileSink.Writer {
            { descriptor, batch, path in
                self.semaphore.wait()
                self.calls.withLock { $0 += 1 }
                return FileSink.write(descriptor, batch, path: path)
            }
        }

        /// Lets every write through from now on.
        func open() {
            for _ in 0..<1000 { semaphore.signal() }
        }
    }

    /// `total` random bytes in chunks of random sizes, made off the cooperative pool (megabytes
    /// of a debug build's random words take a pool thread for many seconds under a sanitizer,
    /// and every other test's requests wait for it).
    static func chunks(total: Int, seed: UInt64) async throws -> [Data] {
        try await offThePool { makeChunks(total: total, seed: seed) }
    }

    private static func makeChunks(total: Int, seed: UInt64) -> [Data] {
        var random = SeededRandom(seed: seed)
        let bytes = SeededRandom.bytes(total, seed: seed)
        var chunks: [Data] = []
        var made = 0
        while made < total {
            let size = min(total - made, Int.random(in: 1...40_000, using: &random))
            chunks.append(bytes.subdata(in: made..<made + size))
            made += size
        }
        return chunks
    }

    static func finish(_ sink: FileSink) async -> CourierError? {
        await withCheckedContinuation { continuation in
            sink.finish { continuation.resume(returning: $0) }
        }
    }

    /// Runs the blocking `waitForDisk()` on a thread of its own, never on the cooperative pool
    /// (on Linux, `DispatchQueue.global()` is the pool's own queue).
    static func waitForDisk(_ sink: FileSink) async {
        _ = try? await offThePool { sink.waitForDisk() }
    }

    @Test func chunksReachTheFileWholeAndInOrder() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.url.appendingPathComponent("body.part")
        let chunks = try await Self.chunks(total: 5 * FileSink.batchSize + 12_345, seed: 7)
        let sink = FileSink(url: url)
        for chunk in chunks { try sink.append(chunk) }
        #expect(await Self.finish(sink) == nil)
        #expect(try Data(contentsOf: url) == chunks.reduce(Data(), +))
    }

    /// The file is created readable by its owner only (`FileIO.privateFileMode`). Found by review.
    @Test func theFileIsReadableByItsOwnerOnly() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.url.appendingPathComponent("private.part")
        let sink = FileSink(url: url)
        try sink.append(Data("secret".utf8))
        #expect(await Self.finish(sink) == nil)
        var info = stat()
        #expect(stat(url.path, &info) == 0)
        #expect(info.st_mode & 0o077 == 0)
    }

    @Test func anEmptyBodyIsAnEmptyFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.url.appendingPathComponent("empty.part")
        #expect(await Self.finish(FileSink(url: url)) == nil)
        // Its size, not `Data(contentsOf:)`: reading an empty file leaks 4 KB in this toolchain's
        // Foundation (LeakSanitizer caught it).
        let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber
        #expect(size?.intValue == 0)
    }

    @Test func aSlowDiskNeverHoldsUpAppendAndTheWaitEndsWhenItCatchesUp() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.url.appendingPathComponent("slow.part")
        let gate = Gate()
        let sink = FileSink(url: url, writer: gate.writer())
        let chunks = try await Self.chunks(total: Int(FileSink.window) * 2, seed: 11)
        // Nothing is written yet: every append still returns (a wait here would end the test at
        // its time limit).
        for chunk in chunks { try sink.append(chunk) }
        #expect(sink.isBehind)
        #expect(gate.writes == 0)
        async let waited: Void = Self.waitForDisk(sink)
        gate.open()
        await waited
        #expect(!sink.isBehind)
        #expect(await Self.finish(sink) == nil)
        #expect(try Data(contentsOf: url) == chunks.reduce(Data(), +))
    }

    @Test func discardingWakesAWaitingDelegate() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let gate = Gate()
        let sink = FileSink(url: folder.url.appendingPathComponent("gone.part"), writer: gate.writer())
        for chunk in try await Self.chunks(total: Int(FileSink.window) * 2, seed: 13) { try sink.append(chunk) }
        #expect(sink.isBehind)
        async let waited: Void = Self.waitForDisk(sink)
        sink.discard()
        await waited
        gate.open()
    }

    @Test func aFailedWriteEndsTheTransferWithItsError() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let url = folder.url.appendingPathComponent("full.part")
        let full = CourierError(CocoaError(.fileWriteOutOfSpace))
        let sink = FileSink(url: url) { _, _, _ in full }
        // The write fails on the sink's queue; an append after that may throw it already.
        for chunk in try await Self.chunks(total: 2 * FileSink.batchSize, seed: 17) {
            guard (try? sink.append(chunk)) != nil else { break }
        }
        let failure = await Self.finish(sink)
        guard case .underlying(let error as CocoaError, nil) = failure else {
            Issue.record("expected the write's error, got \(String(describing: failure))")
            return
        }
        #expect(error.code == .fileWriteOutOfSpace)
        #expect(throws: CourierError.self) { try sink.append(Data([1])) }
    }

    @Test func aFileThatCannotBeCreatedIsATypedErrorNamingIt() throws {
        let url = URL(fileURLWithPath: "/no/such/folder/\(UUID().uuidString).part")
        let sink = FileSink(url: url)
        #expect {
            try sink.append(Data([1, 2, 3]))
        } throws: { error in
            guard case CourierError.underlying(let cocoa as CocoaError, nil) = error else { return false }
            return cocoa.userInfo[NSFilePathErrorKey] as? String == url.path
        }
    }
}
