import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Uploads, downloads and progress against the local httpbin.
@Suite(.enabled(if: HTTPBin.isAvailable, "needs COURIER_HTTPBIN_URL (run scripts/test)"), .timeLimit(.minutes(2)))
struct IntegrationTransferTests {
    /// What httpbin's /post says about a multipart body.
    struct FormEcho: Decodable {
        var form: [String: String]
        var files: [String: String]
        var headers: [String: String]
    }

    private func multipart(threshold: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("notes.txt", contents: Data("file contents\nline 2".utf8))
        let form = MultipartFormData(
            parts: [
                .init(name: "title", data: Data("Holiday \"photos\"".utf8)),
                .init(name: "notes", fileURL: file),
                .init(name: "count", data: Data("3".utf8)),
            ], memoryThreshold: threshold)
        let target = Bin(path: "post", method: .post, task: .uploadMultipart(form, urlParameters: ["album": "x"]))
        let echo = try await Provider<Bin>().request(target).map(FormEcho.self)
        #expect(echo.form == ["title": "Holiday \"photos\"", "count": "3"])
        #expect(echo.files == ["notes": "file contents\nline 2"])
        #expect(echo.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=") == true)
    }

    @Test func multipartInMemoryIsEchoed() async throws {
        try await multipart(threshold: MultipartFormData.defaultMemoryThreshold)
    }

    @Test func multipartThroughATemporaryFileIsEchoed() async throws {
        try await multipart(threshold: 16)
    }

    @Test func fileUploadIsEchoed() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let text = String(repeating: "courier upload ", count: 1_000)
        let file = try folder.file("upload.txt", contents: Data(text.utf8))
        let target = Bin(
            path: "anything", method: .put, task: .uploadFile(file, urlParameters: ["k": "v"]),
            headers: ["Content-Type": "text/plain"])
        let echo = try await Provider<Bin>().request(target).map(Echo.self)
        #expect(echo.data == text)
        #expect(echo.args["k"] == .one("v"))
        #expect(echo.headers["Content-Length"] == String(text.utf8.count))
    }

    @Test func downloadSavesAllBytesToTheDestination() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let count = 100_000  // httpbin serves at most 100 KiB
        let target = Bin(
            path: "bytes/\(count)", task: .download(.folder(folder.url) { _, _ in "random.bin" }),
            validation: .successCodes)
        let response = try await Provider<Bin>().request(target)
        let saved = try #require(response.fileURL)
        #expect(try Data(contentsOf: saved).count == count)
        #expect(folder.contents == ["random.bin"])
        #expect(response.data.isEmpty)
    }

    @Test func dripReportsIncreasingProgressEndingCompleted() async throws {
        let target = Bin(path: "drip?numbytes=4&duration=1&delay=0&code=200")
        var events: [ProgressEvent] = []
        for try await event in Provider<Bin>().requestWithProgress(target) { events.append(event) }
        #expect(events.count >= 3)
        let fractions = events.compactMap(\.fraction)
        #expect(fractions == fractions.sorted())
        #expect(events.filter(\.isCompleted).count == 1)
        #expect(events.last?.isCompleted == true)
        #expect(events.last?.download?.completed == 4)
        #expect(events.dropLast().contains { $0.download?.total == 4 && ($0.fraction ?? 0) < 1 })
    }

    @Test func chunkedResponseIsIndeterminate() async throws {
        let target = Bin(path: "stream-bytes/50000?chunk_size=1000")
        var events: [ProgressEvent] = []
        for try await event in Provider<Bin>().requestWithProgress(target) { events.append(event) }
        let partial = events.filter { !$0.isCompleted }
        #expect(!partial.isEmpty)
        #expect(partial.allSatisfy { $0.isIndeterminate })
        #expect(events.last?.download?.completed == 50_000)
        #expect(events.last?.fraction == 1)
    }

    @Test func fileUploadReportsUploadProgress() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let size = 2_000_000
        let file = try folder.file("big.bin", contents: Data(count: size))
        let target = Bin(
            path: "anything", method: .post, task: .uploadFile(file),
            headers: ["Content-Type": "application/octet-stream"])
        var events: [ProgressEvent] = []
        for try await event in Provider<Bin>().requestWithProgress(target) { events.append(event) }
        let uploads = events.compactMap(\.upload)
        #expect(uploads.allSatisfy { $0.total == Int64(size) })
        #expect(uploads.last?.completed == Int64(size))
        #expect(events.filter { !$0.isCompleted }.count >= 2, "progress arrives more than once")
        let fractions = events.compactMap(\.fraction)
        #expect(fractions == fractions.sorted())
    }

    @Test(.enabled(if: FaultServer.isAvailable, "needs scripts/test's fault server"))
    func cancellingMidDownloadLeavesNoFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let transport = RecordingTransferTransport(wrapping: URLSessionTransport())
        let provider = Provider<Fault>(transport: transport)
        let target = Fault(
            // 10 of 100 bytes, then nothing until the client leaves: the download cannot end before
            // the loop leaves it, however late the machine lets this task run (sanitizers).
            path: "stall-body", task: .download(.folder(folder.url) { _, _ in "partial.bin" }), timeout: nil)
        for try await event in provider.requestWithProgress(target) {
            #expect(!event.isCompleted, "the download finished before the loop could leave it")
            if (event.download?.completed ?? 0) > 0 { break }
        }
        let record = try #require(transport.transfers.first)
        guard case .file(let temporary) = record.transfer.destination else {
            Issue.record("expected a file destination")
            return
        }
        #expect(await eventually { !fileExists(temporary) })
        #expect(folder.contents.isEmpty)
    }
}
