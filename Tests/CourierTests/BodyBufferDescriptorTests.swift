import Foundation
import Testing

@testable import Courier

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A stream leaves no descriptor open, however its reader ends: a reader cancelled while it reads
/// the backlog back from the spill file used to leave the unlinked file open (9–12 of 60 such
/// streams held 400–530 MiB of disk until the process ended).
@Suite struct BodyBufferDescriptorTests {
    static let chunk = 64 << 10
    /// Twice the memory window: half of it waits on disk.
    static let chunksPerStream = 2 * BodyBuffer.memoryWindow / chunk

    @Test func readersCancelledWhileReadingTheSpillFileLeaveNoDescriptorOpen() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        #expect(openDescriptors(under: folder.url) == 0)
        for _ in 0..<60 {
            let buffer = BodyBuffer(limits: .default, spillDirectory: folder.url)
            for _ in 0..<Self.chunksPerStream { buffer.write(Data(count: Self.chunk)) }
            // The body stays open: only the cancel ends the reader.
            let (spilling, signal) = AsyncStream.makeStream(of: Void.self)
            let reader = Task {
                var read = 0
                var signalled = false
                while let data = try await buffer.next() {
                    read += data.count
                    // Past the window (which holds a little less than its size in chunks, see
                    // `BodyBuffer.chunkOverhead`): every read from here on comes from the file.
                    if read >= BodyBuffer.memoryWindow, !signalled {
                        signalled = true
                        signal.yield()
                    }
                }
            }
            var arrivals = spilling.makeAsyncIterator()
            await arrivals.next()
            reader.cancel()
            _ = await reader.result
        }
        #expect(openDescriptors(under: folder.url) == 0)
    }

    @Test func everyOtherEndingClosesTheSpillFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        func spilled() -> BodyBuffer {
            let buffer = BodyBuffer(limits: .default, spillDirectory: folder.url)
            for _ in 0..<Self.chunksPerStream { buffer.write(Data(count: Self.chunk)) }
            return buffer
        }
        // Read to the end.
        let whole = spilled()
        whole.finish()
        while try await whole.next() != nil {}
        // Failed by the writer, while unread.
        let failed = spilled()
        failed.finish(.timedOut(.seconds(1)))
        await #expect(throws: CourierError.self) { while try await failed.next() != nil {} }
        // Dropped unread, or terminated after a first chunk.
        do { _ = spilled() }
        let left = spilled()
        _ = try await left.next()
        left.terminate()
        #expect(openDescriptors(under: folder.url) == 0)
    }

    /// The descriptors of this process open on files in `folder` (unlinked ones included).
    /// A process the app starts while a stream spills must not inherit the spill file: the
    /// descriptor is close-on-exec, as every other file Courier opens (it was not, so a child kept
    /// the unlinked backlog, response data, readable and on disk for as long as it ran).
    @Test func theSpillFileIsNotInheritedByChildProcesses() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let buffer = BodyBuffer(limits: .default, spillDirectory: folder.url)
        for _ in 0..<Self.chunksPerStream { buffer.write(Data(count: Self.chunk)) }
        defer { buffer.terminate() }
        let descriptors = descriptors(under: folder.url)
        #expect(descriptors.count == 1)
        for descriptor in descriptors {
            #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
        }
    }

    private func descriptors(under folder: URL) -> [Int32] {
        let prefix = folder.resolvingSymlinksInPath().path
        #if os(Linux)
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return entries.compactMap { entry in
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")
                return target?.hasPrefix(prefix) == true ? Int32(entry) : nil
            }
        #elseif canImport(Darwin)
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/fd")) ?? []
            return entries.compactMap { Int32($0) }.filter { descriptor in
                var path = [CChar](repeating: 0, count: Int(MAXPATHLEN))
                guard fcntl(descriptor, F_GETPATH, &path) == 0 else { return false }
                return String(cString: path).hasPrefix(prefix)
            }
        #else
            return []
        #endif
    }

    private func openDescriptors(under folder: URL) -> Int {
        let prefix = folder.resolvingSymlinksInPath().path
        #if os(Linux)
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return entries.count { entry in
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")
                return target?.hasPrefix(prefix) ?? false
            }
        #elseif canImport(Darwin)
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/fd")) ?? []
            return entries.compactMap { Int32($0) }.count { descriptor in
                var path = [CChar](repeating: 0, count: Int(MAXPATHLEN))
                guard fcntl(descriptor, F_GETPATH, &path) == 0 else { return false }
                return String(cString: path).hasPrefix(prefix)
            }
        #else
            return 0
        #endif
    }
}
