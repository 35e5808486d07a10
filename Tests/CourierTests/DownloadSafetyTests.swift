import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Downloads: only regular files are ever replaced; the move cannot be redirected by a link;
/// nothing is left behind in the temporary folder.
@Suite struct DownloadSafetyTests {
    struct Download: TargetType {
        var headers: [String: String] { [:] }
        var destination: DownloadDestination
        var timeout: Duration? = nil
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "file" }
        var task: HTTPTask { .download(destination) }
        var sampleData: Data { Data("downloaded".utf8) }
    }

    /// `/dev/shm` when it is on another file system than the temporary folder (tmpfs on Linux),
    /// where a move is a copy.
    static let otherFileSystem: URL? = {
        let shm = URL(fileURLWithPath: "/dev/shm")
        var a = stat()
        var b = stat()
        guard stat(shm.path, &a) == 0, stat(FileManager.default.temporaryDirectory.path, &b) == 0, a.st_dev != b.st_dev
        else { return nil }
        return shm
    }()

    /// A file of several copy chunks (1 MiB each) on the other file system, and its bytes.
    static func fileElsewhere() throws -> (URL, Data) {
        let bytes = Data((0..<(3 << 20) + 17).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let url = (otherFileSystem ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("courier-test-\(UUID().uuidString).part")
        try bytes.write(to: url)
        return (url, bytes)
    }

    static func placement(
        for source: URL, in folder: URL
    ) throws -> (DownloadDestination, DownloadDestination.Placement) {
        let destination = DownloadDestination.folder(folder) { _, _ in "copy.bin" }
        let response = try #require(HTTPURLResponse(url: source, statusCode: 200, httpVersion: nil, headerFields: nil))
        return (destination, try destination.resolve(temporaryURL: source, response: response))
    }

    /// Into another file system the move is a copy (off Swift's pool): the file arrives whole, the
    /// temporary one goes, and nothing staged is left in the folder.
    @Test(.enabled(if: otherFileSystem != nil, "needs /dev/shm on another file system than the temporary folder"))
    func aMoveToAnotherFileSystemCopiesTheFileWhole() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (source, bytes) = try Self.fileElsewhere()
        defer { try? FileManager.default.removeItem(at: source) }
        let (destination, placement) = try Self.placement(for: source, in: folder.url)
        try await destination.move(source, to: placement)
        #expect(try Data(contentsOf: placement.url) == bytes)
        #expect(!FileManager.default.fileExists(atPath: source.path))
        #expect(folder.contents == ["copy.bin"])
    }

    /// Answers each download once the test lets it, whether its call is still waiting or not (a
    /// transport that never looks at cancellation): the body written to the transfer's file.
    final class LateTransport: Transport {
        private let state = Locked<(held: CheckedContinuation<Void, Never>?, file: URL?, open: Bool)>((nil, nil, false))

        func send(_ transfer: Transfer) async throws -> Response {
            if case .file(let url) = transfer.destination { state.withLock { $0.file = url } }
            await withCheckedContinuation { continuation in
                let go = state.withLock { state in
                    if !state.open { state.held = continuation }
                    return state.open
                }
                if go { continuation.resume() }
            }
            let response = try await transfer.sendBuffered {
                Response(statusCode: 200, data: Data("late".utf8), request: $0)
            }
            answered.withLock { $0 = true }
            return response
        }

        /// The body is in the temporary file and the answer on its way back.
        let answered = Locked(false)

        var arrived: Bool { state.withLock { $0.held != nil } }
        var file: URL? { state.withLock { $0.file } }

        func release() {
            let held = state.withLock { state in
                state.open = true
                defer { state.held = nil }
                return state.held
            }
            held?.resume()
        }
    }

    /// A download whose answer comes after the call's deadline passed is not put in its place:
    /// the caller was told `timedOut`, so the folder stays empty and the temporary file goes.
    @Test func aDownloadAnsweredAfterTheCallTimeoutLeavesNothing() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = TestClock()
        let transport = LateTransport()
        let provider = Provider<Download>(transport: transport, clock: clock, callTimeout: .seconds(3))
        let call = Task {
            try await provider.request(Download(destination: .folder(folder.url) { _, _ in "late.bin" }))
        }
        #expect(await eventually { transport.arrived })
        clock.advance(by: .seconds(3))
        guard case .timedOut? = (await call.result).failure as? CourierError else {
            Issue.record("expected timedOut")
            transport.release()
            return
        }
        let temporary = try #require(transport.file)
        transport.release()
        #expect(
            await eventually {
                transport.answered.withLock { $0 } && !FileManager.default.fileExists(atPath: temporary.path)
            })
        #expect(folder.contents.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: temporary.path))
    }

    /// A cancelled caller's copy stops: `cancelled`, nothing in the folder (the staged copy is
    /// removed), and the temporary file is still there for the caller to remove.
    @Test(.enabled(if: otherFileSystem != nil, "needs /dev/shm on another file system than the temporary folder"))
    func aCancelStopsACopyAndLeavesNothingInTheFolder() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let (source, _) = try Self.fileElsewhere()
        defer { try? FileManager.default.removeItem(at: source) }
        let (destination, placement) = try Self.placement(for: source, in: folder.url)
        let error = await Task { () -> CourierError? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(CourierError) {
                try await destination.move(source, to: placement)
                return nil
            } catch {
                return error
            }
        }.value
        guard case .cancelled? = error else {
            Issue.record("expected cancelled, got \(String(describing: error))")
            return
        }
        #expect(folder.contents.isEmpty)
        #expect(FileManager.default.fileExists(atPath: source.path))
    }

    @Test func aFolderInTheWayIsNeverDeleted() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let precious = folder.url.appendingPathComponent("report.pdf")
        try FileManager.default.createDirectory(at: precious, withIntermediateDirectories: true)
        _ = try folder.file("report.pdf/keep.txt", contents: Data("keep".utf8))
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        await #expect {
            try await provider.request(
                Download(destination: .folder(folder.url, options: [.removePreviousFile]) { _, _ in "report.pdf" }))
        } throws: { error in
            guard case CourierError.downloadDestination(let underlying) = error,
                case .notARegularFile(let url) = underlying as? DownloadFailure
            else { return false }
            return url.standardizedFileURL.path == precious.standardizedFileURL.path
        }
        #expect(FileManager.default.fileExists(atPath: precious.appendingPathComponent("keep.txt").path))
    }

    @Test func aLinkInTheWayIsNeverReplaced() async throws {
        let folder = try TemporaryFolder()
        let outside = try TemporaryFolder()
        defer {
            folder.remove()
            outside.remove()
        }
        let target = try outside.file("target.txt", contents: Data("original".utf8))
        let link = folder.url.appendingPathComponent("name.txt")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        for options: DownloadDestination.Options in [[], [.removePreviousFile]] {
            await #expect(throws: CourierError.self) {
                try await provider.request(
                    Download(destination: .folder(folder.url, options: options) { _, _ in "name.txt" }))
            }
        }
        #expect(try Data(contentsOf: target) == Data("original".utf8))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
    }

    @Test func aRegularFileIsReplacedOnlyWhenAsked() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let existing = try folder.file("a.txt", contents: Data("old".utf8))
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        await #expect(throws: CourierError.self) {
            try await provider.request(Download(destination: .folder(folder.url, options: []) { _, _ in "a.txt" }))
        }
        #expect(try Data(contentsOf: existing) == Data("old".utf8))
        _ = try await provider.request(
            Download(destination: .folder(folder.url, options: [.removePreviousFile]) { _, _ in "a.txt" }))
        #expect(try Data(contentsOf: existing) == Data("downloaded".utf8))
    }

    /// A folder on the way swapped for a link to elsewhere while downloads land: none lands outside.
    @Test func swappingAFolderForALinkNeverLetsAFileOut() async throws {
        let folder = try TemporaryFolder()
        let outside = try TemporaryFolder()
        defer {
            folder.remove()
            outside.remove()
        }
        let sub = folder.url.appendingPathComponent("sub")
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        // The swapper runs on a thread of its own, never on Swift's cooperative pool, so the rest
        // of the parallel suite keeps running meanwhile.
        let stop = Locked(false)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var flips = 0
            while !stop.withLock({ $0 }), flips < 100_000 {
                flips += 1
                try? FileManager.default.removeItem(at: sub)
                if flips.isMultiple(of: 2) {
                    try? FileManager.default.createSymbolicLink(at: sub, withDestinationURL: outside.url)
                } else {
                    try? FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
                }
            }
            done.signal()
        }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    _ = try? await provider.request(
                        Download(
                            destination: .folder(folder.url, options: [.createIntermediateDirectories]) { _, _ in
                                "sub/\(index).txt"
                            }))
                }
            }
        }
        stop.withLock { $0 = true }
        // Waited for on a thread of its own: on Linux, `DispatchQueue.global()` is the cooperative
        // pool's own queue.
        _ = try? await offThePool { done.wait() }
        #expect(outside.contents.isEmpty)
    }

    /// A transport that writes the download, then answers only once the test lets it, ignoring
    /// cancellation: the deadline passes "as the body completes".
    final class LateDownloadTransport: Transport {
        let gate = StageGate()
        let written = Locked<URL?>(nil)

        func send(_ transfer: Transfer) async throws -> Response {
            guard case .file(let url) = transfer.destination else { throw URLError(.badURL) }
            try Data("body".utf8).write(to: url)
            written.withLock { $0 = url }
            await Task { try? await gate.pass() }.value
            return Response(statusCode: 200, data: Data(), request: transfer.request, response: nil, fileURL: url)
        }
    }

    @Test func aDeadlineAsTheBodyCompletesLeavesNoFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = TestClock()
        let transport = LateDownloadTransport()
        let provider = Provider<Download>(transport: transport, clock: clock)
        let request = Task {
            try await provider.request(
                Download(destination: .suggestedFileName(in: folder.url), timeout: .seconds(1)))
        }
        await transport.gate.waitForArrivals(1)
        clock.advance(by: .seconds(1))
        guard case .timedOut = (await request.result).failure as? CourierError else {
            Issue.record("expected timedOut")
            return
        }
        let temporary = try #require(transport.written.withLock { $0 })
        transport.gate.open()
        // The late answer is dropped and its file removed.
        #expect(await eventually { !fileExists(temporary) })
        #expect(folder.contents.isEmpty)
    }
}
