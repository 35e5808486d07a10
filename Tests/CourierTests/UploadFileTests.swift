import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct UploadFileTests {
    struct Upload: TargetType {
        var headers: [String: String] { [:] }
        var file: URL
        var method: HTTPMethod = .put
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "files" }
        var task: HTTPTask { .uploadFile(file, urlParameters: ["name": "a b"]) }
    }

    @Test func fileBodyAndQueryReachTheTransport() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("payload.bin", contents: Data("0123456789".utf8))
        let transport = RecordingTransferTransport(wrapping: RecordingTransport())
        _ = try await Provider<Upload>(transport: transport).request(Upload(file: file))
        let record = try #require(transport.transfers.first)
        #expect(record.transfer.body == .file(file))
        #expect(record.body == Data("0123456789".utf8))
        #expect(record.transfer.request.url?.query == "name=a%20b")
        #expect(fileExists(file), "the caller's file is never removed")
    }

    @Test func missingFileThrowsBeforeSending() async {
        let transport = RecordingTransport()
        await #expect {
            try await Provider<Upload>(transport: transport).request(
                Upload(file: URL(fileURLWithPath: "/no/such/file")))
        } throws: { error in
            guard case CourierError.requestMapping(let reason) = error else { return false }
            return reason.contains("/no/such/file")
        }
        #expect(transport.sent.isEmpty)
    }

    @Test(arguments: [HTTPMethod.get, .head])
    func bodilessMethodsThrow(method: HTTPMethod) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("a", contents: Data("x".utf8))
        await #expect(throws: CourierError.self) {
            try await Provider<Upload>(transport: RecordingTransport()).request(Upload(file: file, method: method))
        }
    }

    @Test func identicalFileUploadsAreMergedWhenAllowed() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("a", contents: Data("x".utf8))
        let other = try folder.file("b", contents: Data("x".utf8))
        let gated = GatedTransport()
        let provider = Provider<Upload>(transport: gated, deduplication: .allMethods)
        let tasks = [file, file, other].map { url in Task { try await provider.request(Upload(file: url)) } }
        await gated.waitForRequests(2)
        await provider.waitForInflightWaiters(3)
        #expect(await provider.inflightWaiterCount == 3)
        #expect(await provider.inflightCount == 2)
        gated.release()
        for task in tasks { _ = try await task.value }
        #expect(gated.calls == 2)
    }
}
