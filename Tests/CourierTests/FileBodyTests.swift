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

/// Files given as bodies: only regular files of a stable size, read off Swift's thread pool.
@Suite struct FileBodyTests {
    struct Upload: TargetType {
        var headers: [String: String] { [:] }
        var task: HTTPTask
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "upload" }
        var method: HTTPMethod { .post }
    }

    /// A FIFO in a folder of its own; `remove()` first unblocks any reader left waiting on it (by
    /// opening and closing the writing end), then removes the folder.
    struct FIFO {
        let url: URL
        let folder: TemporaryFolder

        init() throws {
            folder = try TemporaryFolder()
            url = folder.url.appendingPathComponent("pipe")
            #expect(mkfifo(url.path, 0o600) == 0)
        }

        func remove() {
            let writer = open(url.path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            folder.remove()
        }
    }

    @Test func nonRegularFilesAreRefusedBeforeSending() async throws {
        let fifo = try FIFO()
        defer { fifo.remove() }
        var candidates = [URL(fileURLWithPath: "/dev/zero"), fifo.folder.url, fifo.url]
        #if os(Linux)
            candidates.append(URL(fileURLWithPath: "/proc/self/status"))
        #endif
        for url in candidates {
            let transport = RecordingTransferTransport(wrapping: RecordingTransport())
            let provider = Provider<Upload>(transport: transport)
            await #expect(throws: CourierError.self, "\(url.path)") {
                try await provider.request(Upload(task: .uploadFile(url)))
            }
            await #expect(throws: CourierError.self, "\(url.path) as a part") {
                try await provider.request(
                    Upload(task: .uploadMultipart(MultipartFormData(parts: [.init(name: "f", fileURL: url)]))))
            }
            #expect(transport.transfers.isEmpty)
        }
    }

    /// Two stream parts that block (a FIFO with no writer) no longer freeze the process: the
    /// deadline answers both callers, and other work goes on meanwhile.
    @Test func blockingStreamPartsHonourDeadlines() async throws {
        let fifo = try FIFO()
        defer { fifo.remove() }
        let pipe = fifo.url
        let clock = TestClock()
        let provider = Provider<Upload>(transport: RecordingTransport(), clock: clock, timeout: .seconds(5))
        let form = MultipartFormData(parts: [
            .init(name: "a", stream: { InputStream(url: pipe) }, length: 10)
        ])
        let requests = (0..<2).map { _ in
            Task { try await provider.request(Upload(task: .uploadMultipart(form))) }
        }
        await clock.waitForSleepers(1)
        // The cooperative pool still runs other work.
        let other = await Task.detached { (1...1000).reduce(0, +) }.value
        #expect(other == 500_500)
        // Both deadlines share the provider's one timer, so one sleeper says nothing of the
        // second request: its deadline may be set after a single advance (one CI run then waited
        // for it for ever). Time moves on, a bounded number of times, until both have answered.
        let answered = Locked(0)
        let results = requests.map { request in
            Task {
                let result = await request.result
                answered.withLock { $0 += 1 }
                return result
            }
        }
        let bothAnswered = await eventually {
            if answered.withLock({ $0 }) == requests.count { return true }
            clock.advance(by: .seconds(5))
            return false
        }
        guard bothAnswered else {
            Issue.record("the deadlines did not answer both requests")
            requests.forEach { $0.cancel() }
            return
        }
        for result in results {
            guard case .timedOut = (await result.value).failure as? CourierError else {
                Issue.record("expected timedOut")
                continue
            }
        }
    }

    @Test func blockingStreamPartsHonourCancellation() async throws {
        let fifo = try FIFO()
        defer { fifo.remove() }
        let pipe = fifo.url
        let gate = StageGate()
        let provider = Provider<Upload>(transport: RecordingTransport(), plugins: [GateAfterPrepare(gate: gate)])
        let form = MultipartFormData(parts: [.init(name: "a", stream: { InputStream(url: pipe) }, length: 10)])
        let request = Task { try await provider.request(Upload(task: .uploadMultipart(form))) }
        await gate.waitForArrivals(1)
        gate.open()
        // The stream part now blocks on a dispatch thread; the cancel still answers at once.
        request.cancel()
        guard case .cancelled = (await request.result).failure as? CourierError else {
            Issue.record("expected cancelled")
            return
        }
    }

    struct GateAfterPrepare: Plugin {
        let gate: StageGate
        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            try await gate.pass()
            return request
        }
    }

    /// Grows a file after the request (and its Content-Length) was built, before the body is.
    struct Grow: Plugin {
        let file: URL
        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            let handle = try FileHandle(forWritingTo: file)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("678".utf8))
            try handle.close()
            return request
        }
    }

    @Test(arguments: [100, 0])
    func aFilePartThatChangesSizeBeforeItIsSentIsATypedError(memoryThreshold: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("grow.txt", contents: Data("12345".utf8))
        let form = MultipartFormData(parts: [.init(name: "f", fileURL: file)], memoryThreshold: memoryThreshold)
        let transport = RecordingTransferTransport(wrapping: RecordingTransport())
        let provider = Provider<Upload>(transport: transport, plugins: [Grow(file: file)])
        await #expect {
            try await provider.request(Upload(task: .uploadMultipart(form)))
        } throws: { error in
            guard case CourierError.multipartEncoding(let underlying) = error,
                case .sizeChanged = underlying as? MultipartFailure
            else { return false }
            return true
        }
        #expect(transport.transfers.isEmpty)
    }
}
