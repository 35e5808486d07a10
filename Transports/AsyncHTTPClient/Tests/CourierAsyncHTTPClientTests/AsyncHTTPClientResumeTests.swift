import Courier
import CourierAsyncHTTPClient
import CourierTransportConformance
import Foundation
import Testing

/// Durable downloads (issue 27) on `AsyncHTTPClientTransport`, against scripts/fault_server.py's
/// `/resumable` (a file that honours `Range` and `If-Range`, whose whole answers break off at 60 %).
@Suite(.enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"))
struct AsyncHTTPClientResumeTests {
    static let size = 2 << 20

    struct Resumable: TargetType {
        var baseURL: URL
        var query: String
        var file: URL?
        var id: String
        var retryPolicy: RetryPolicy? = nil
        var path: String = ""
        init(
            baseURL: URL, query: String, file: URL? = nil, id: String, retryPolicy: RetryPolicy? = nil,
            path: String? = nil
        ) {
            self.baseURL = baseURL
            self.query = query
            self.file = file
            self.id = id
            self.retryPolicy = retryPolicy
            self.path = path ?? "resumable?\(query)"
        }
        var headers: [String: String] { [:] }
        var task: HTTPTask {
            guard let file else { return .plain }
            return .download(.custom(options: [.createIntermediateDirectories, .removePreviousFile]) { _, _ in file })
        }
        var validation: ValidationType { .successCodes }
        var timeout: Duration? { .seconds(60) }
        var downloadResumption: DownloadResumption { .enabled(id: id) }
    }

    struct LogEntry: Decodable {
        var range: String?
        var status: Int
        var sent: Int64
    }

    /// A folder of the test's own, removed at the end.
    final class Folder: Sendable {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ahc-resume-\(UUID().uuidString)")
        var file: URL { url.appendingPathComponent("download.bin") }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    private static func log(id: String, fault: URL) async throws -> [LogEntry] {
        let log = try await Provider<Resumable>(transport: AsyncHTTPClientTransport()).request(
            Resumable(baseURL: fault, query: "", id: id, path: "resumable-log?id=\(id)"))
        return try JSONDecoder().decode([LogEntry].self, from: log.data)
    }

    @Test func aRetryAsksOnlyForTheRestAndTheFileIsIdentical() async throws {
        let fault = try #require(ConformanceServers.fromEnvironment?.fault)
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>(transport: AsyncHTTPClientTransport())
        // The default errors: a body cut short is `.networkConnectionLost` (AsyncHTTPClient's
        // "stream ended at an unexpected time"), which the default policy retries.
        let retrying = RetryPolicy(maxAttempts: 2, baseDelay: .zero, jitter: .none)
        let response = try await provider.request(
            Resumable(
                baseURL: fault, query: "n=\(Self.size)&v=1&id=\(id)", file: folder.file, id: id, retryPolicy: retrying))
        #expect(response.statusCode == 206)
        let whole = try await provider.request(
            Resumable(baseURL: fault, query: "n=\(Self.size)&v=1&cut=0&id=reference", id: "reference"))
        #expect(try Data(contentsOf: folder.file) == whole.data)
        let log = try await Self.log(id: id, fault: fault)
        #expect(log.map(\.status) == [200, 206])
        // AsyncHTTPClient may drop the body parts it had not handed over when the connection broke:
        // the second attempt starts where the kept bytes end, somewhere before the cut.
        let start = try #require(log.last?.range.flatMap { Int64($0.dropFirst(6).dropLast()) })
        #expect(start > 0 && start <= Int64(Self.size) * 60 / 100)
        #expect(response.metrics?.attempts.last?.transfer?.bytesReceived == Int64(Self.size) - start)
    }

    @Test func aChangedFileOnTheServerStartsOverCleanly() async throws {
        let fault = try #require(ConformanceServers.fromEnvironment?.fault)
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>(transport: AsyncHTTPClientTransport())
        await #expect(throws: CourierError.self) {
            try await provider.request(
                Resumable(baseURL: fault, query: "n=\(Self.size)&v=1&id=\(id)", file: folder.file, id: id))
        }
        let response = try await provider.request(
            Resumable(baseURL: fault, query: "n=\(Self.size)&v=2&cut=0&id=\(id)", file: folder.file, id: id))
        #expect(response.statusCode == 200)
        let whole = try await provider.request(
            Resumable(baseURL: fault, query: "n=\(Self.size)&v=2&cut=0&id=reference", id: "reference"))
        #expect(try Data(contentsOf: folder.file) == whole.data)
        let log = try await Self.log(id: id, fault: fault)
        #expect(log.map(\.status) == [200, 200])
        #expect(log.last?.range != nil)
    }
}
