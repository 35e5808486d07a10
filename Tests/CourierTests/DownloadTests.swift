import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct DownloadTests {
    struct Download: TargetType {
        var headers: [String: String] { [:] }
        var destination: DownloadDestination
        var status = 200
        var validation: ValidationType = .successCodes
        var baseURL: URL { URL(string: "https://files.example.com")! }
        var path: String { "reports/q3.pdf" }
        var task: HTTPTask { .downloadParameters(["v": 1], encoding: .queryString, destination: destination) }
        var sampleResponse: SampleResponse { .networkResponse(status, Data("PDF-BYTES".utf8)) }
    }

    @Test func stubbedDownloadIsSavedToTheChosenFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let destination = DownloadDestination.folder(folder.url.appendingPathComponent("nested/dir")) { _, _ in
            "report.pdf"
        }
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        let response = try await provider.request(Download(destination: destination))
        let saved = try #require(response.fileURL)
        #expect(saved.lastPathComponent == "report.pdf")
        #expect(try Data(contentsOf: saved) == Data("PDF-BYTES".utf8))
        #expect(response.data.isEmpty)
        #expect(response.request?.url?.query == "v=1")
    }

    /// A download is created readable by its owner only, whatever the umask: it starts in the
    /// shared temporary directory, and the file moved into place is the same inode. Found by
    /// review.
    @Test func aDownloadIsReadableByItsOwnerOnly() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        let saved = try #require(
            try await provider.request(Download(destination: .folder(folder.url) { _, _ in "private.pdf" })).fileURL)
        var info = stat()
        #expect(stat(saved.path, &info) == 0)
        #expect(info.st_mode & 0o077 == 0, "mode \(String(info.st_mode & 0o777, radix: 8))")
        // A body larger than the inline write, written off the pool.
        let large = TemporaryFiles.newDownloadURL()
        defer { unlink(large.path) }
        try FileIO.writePrivateFile(Data(count: Transfer.inlineWriteLimit + 1), to: large)
        #expect(stat(large.path, &info) == 0)
        #expect(info.st_mode & 0o077 == 0)
    }

    @Test func downloadThroughATransportUsesItsTransfer() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let transport = RecordingTransferTransport(
            wrapping: RecordingTransport(statusCode: 200, data: Data("remote".utf8)))
        let provider = Provider<Download>(transport: transport)
        let response = try await provider.request(Download(destination: .suggestedFileName(in: folder.url)))
        #expect(folder.contents == ["q3.pdf"])
        #expect(try Data(contentsOf: try #require(response.fileURL)) == Data("remote".utf8))
        guard case .file(let temporary) = try #require(transport.transfers.first).transfer.destination else {
            Issue.record("expected a file destination")
            return
        }
        #expect(!fileExists(temporary), "the temporary file was moved")
    }

    @Test func existingFileIsKeptUnlessReplacing() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let existing = try folder.file("report.pdf", contents: Data("old".utf8))
        let keep = DownloadDestination.folder(folder.url) { _, _ in "report.pdf" }
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        await #expect {
            try await provider.request(Download(destination: keep))
        } throws: { error in
            guard case CourierError.downloadDestination(let underlying) = error else { return false }
            return underlying as? DownloadFailure == .fileExists(existing.standardizedFileURL.resolvingSymlinksInPath())
        }
        #expect(try Data(contentsOf: existing) == Data("old".utf8))
        #expect(folder.contents == ["report.pdf"])

        let replace = DownloadDestination.folder(folder.url, options: [.removePreviousFile]) { _, _ in "report.pdf" }
        _ = try await provider.request(Download(destination: replace))
        #expect(try Data(contentsOf: existing) == Data("PDF-BYTES".utf8))
    }

    @Test(arguments: ["../escape.txt", "a/../../escape.txt", "/etc/passwd", "", "..", "sub/../..", "nul\u{0}byte"])
    func namesLeavingTheFolderAreRejected(name: String) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let inner = folder.url.appendingPathComponent("inner")
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        await #expect {
            try await provider.request(Download(destination: .folder(inner) { _, _ in name }))
        } throws: { error in
            guard case CourierError.downloadDestination(let underlying) = error,
                case .outsideFolder = underlying as? DownloadFailure
            else { return false }
            return true
        }
        #expect(folder.contents == ["inner"])
        #expect((try? FileManager.default.contentsOfDirectory(atPath: inner.path)) == [])
    }

    /// A folder that is not a file URL is refused, as a `.custom` destination's URL is, rather than
    /// having its path taken as a local folder. Found by review.
    @Test(arguments: ["https://example.com/downloads", "/tmp/courier-not-a-file-url"])
    func aFolderThatIsNotAFileURLIsRejected(folder: String) async throws {
        let url = try #require(URL(string: folder))
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        await #expect {
            try await provider.request(Download(destination: .folder(url) { _, _ in "file.pdf" }))
        } throws: { error in
            guard case CourierError.downloadDestination(let underlying) = error else { return false }
            return underlying as? DownloadFailure == .notAFileURL(url)
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/courier-not-a-file-url"))
    }

    @Test func symbolicLinkOutOfTheFolderIsRejected() async throws {
        let folder = try TemporaryFolder()
        let outside = try TemporaryFolder()
        defer {
            folder.remove()
            outside.remove()
        }
        try FileManager.default.createSymbolicLink(
            at: folder.url.appendingPathComponent("link"), withDestinationURL: outside.url)
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        await #expect(throws: CourierError.self) {
            try await provider.request(Download(destination: .folder(folder.url) { _, _ in "link/stolen.txt" }))
        }
        #expect(outside.contents.isEmpty)
    }

    @Test func nestedNamesInsideTheFolderAreFine() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        let response = try await provider.request(
            Download(destination: .folder(folder.url) { _, _ in "a/./b/c.txt" }))
        #expect(
            response.fileURL?.path
                == folder.url.standardizedFileURL.resolvingSymlinksInPath().appendingPathComponent("a/b/c.txt").path)
        // `..` is refused even where it would stay inside: folders are walked, never climbed.
        await #expect(throws: CourierError.self) {
            try await provider.request(Download(destination: .folder(folder.url) { _, _ in "a/b/../d.txt" }))
        }
    }

    @Test func failedValidationLeavesNothingBehind() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let transport = RecordingTransferTransport(
            wrapping: RecordingTransport(statusCode: 404, data: Data("nope".utf8)))
        let provider = Provider<Download>(transport: transport)
        await #expect(throws: CourierError.self) {
            try await provider.request(Download(destination: .suggestedFileName(in: folder.url)))
        }
        #expect(folder.contents.isEmpty)
        guard case .file(let temporary) = try #require(transport.transfers.first).transfer.destination else { return }
        #expect(!fileExists(temporary))
    }

    @Test func cancelledDownloadLeavesNothingBehind() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let gated = GatedTransport()
        let transport = RecordingTransferTransport(wrapping: gated)
        let provider = Provider<Download>(transport: transport)
        let request = Task { try await provider.request(Download(destination: .suggestedFileName(in: folder.url))) }
        await gated.waitForRequests(1)
        request.cancel()
        #expect(((await request.result).failure as? CourierError)?.isCancellation == true)
        #expect(folder.contents.isEmpty)
        guard case .file(let temporary) = try #require(transport.transfers.first).transfer.destination else { return }
        #expect(!fileExists(temporary))
    }

    @Test func answeringWithTheTemporaryURLKeepsTheFileThere() async throws {
        // Moya code keeps a download where it landed by answering with the temporary URL.
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        let response = try await provider.request(Download(destination: .custom { temporary, _ in temporary }))
        let file = try #require(response.fileURL)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(fileExists(file), "the file is the caller's now")
        #expect(file.lastPathComponent.hasPrefix("courier-download-"))
        #expect(try Data(contentsOf: file) == Data("PDF-BYTES".utf8))
    }

    @Test func customDestinationMustBeAFileURL() async {
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        await #expect {
            try await provider.request(Download(destination: .custom { _, _ in URL(string: "https://x.example/f")! }))
        } throws: { error in
            guard case CourierError.downloadDestination(let underlying) = error else { return false }
            return underlying is DownloadFailure
        }
    }

    @Test func downloadsAreNeverMerged() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let gated = GatedTransport()
        let provider = Provider<Download>(transport: gated, deduplication: .allMethods)
        let tasks = (0..<3).map { index in
            Task {
                try await provider.request(
                    Download(destination: .folder(folder.url) { _, _ in "copy\(index)" }))
            }
        }
        await gated.waitForRequests(3)
        #expect(await provider.inflightCount == 0)
        gated.release()
        for task in tasks { _ = try await task.value }
        #expect(folder.contents == ["copy0", "copy1", "copy2"])
    }
}
