import CourierTransportConformance
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Durable downloads (issue 27) against scripts/fault_server.py's `/resumable` (a file that
/// honours `Range` and `If-Range`, whose whole answers break off at 60 %).
@Suite(.enabled(if: FaultServer.isAvailable, "needs COURIER_FAULT_URL (run scripts/test)"), .timeLimit(.minutes(3)))
struct IntegrationResumeTests {
    static let size = 2 << 20
    /// What a whole answer sends before it breaks off.
    static let cut = Int64(size) * 60 / 100

    struct Resumable: TargetType {
        var query: String
        var file: URL
        var resumption: DownloadResumption
        var retryPolicy: RetryPolicy? = nil
        var headers: [String: String] = [:]
        var limits: Limits? = nil
        var baseURL: URL { FaultServer.baseURL ?? URL(string: "http://127.0.0.1:9")! }
        var path: String { "resumable?\(query)" }
        var task: HTTPTask {
            .download(.custom(options: [.createIntermediateDirectories, .removePreviousFile]) { [file] _, _ in file })
        }
        var validation: ValidationType { .successCodes }
        var timeout: Duration? { .seconds(60) }
        var downloadResumption: DownloadResumption { resumption }
    }

    struct LogEntry: Decodable {
        var range: String?
        var ifRange: String?
        var status: Int
        var sent: Int64
        var query: [String: String]
        var authorized: Bool
        var host: String
    }

    /// A folder of the test's own, removed at the end.
    final class Folder: Sendable {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("resume-\(UUID().uuidString)")
        var file: URL { url.appendingPathComponent("download.bin") }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    /// The retries a dropped connection gets: the default errors (a cut body is
    /// `.networkConnectionLost` on every transport), without waiting.
    static var retrying: RetryPolicy {
        RetryPolicy(maxAttempts: 2, baseDelay: .zero, jitter: .none)
    }

    /// The whole file, in one answer.
    static func expected(version: String) async throws -> Data {
        let whole = try await Provider<Fault>().request(
            Fault(path: "resumable?n=\(size)&v=\(version)&cut=0&id=reference", timeout: .seconds(60)))
        #expect(whole.data.count == size)
        return whole.data
    }

    /// Resumes with a fresh URL: the first one's `sig=1` (expired, as it were) becomes `sig=2`.
    static func signedAgain(id: String) -> DownloadResumption {
        .enabled(id: id) { url in
            URL(string: url.absoluteString.replacingOccurrences(of: "sig=1", with: "sig=2")) ?? url
        }
    }

    static func log(_ id: String) async throws -> [LogEntry] {
        let response = try await Provider<Fault>().request(Fault(path: "resumable-log?id=\(id)", timeout: .seconds(30)))
        return try JSONDecoder().decode([LogEntry].self, from: response.data)
    }

    @Test func aRetryAsksOnlyForTheRestAndTheFileIsIdentical() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        let response = try await provider.request(
            Resumable(
                query: "n=\(Self.size)&v=1&id=\(id)", file: folder.file, resumption: .enabled(),
                retryPolicy: Self.retrying))
        let attempts = try #require(response.metrics?.attempts)
        #expect(attempts.count == 2)
        #expect(response.statusCode == 206)
        // The second attempt received only the rest.
        #expect(attempts.last?.transfer?.bytesReceived == Int64(Self.size) - Self.cut)
        let data = try Data(contentsOf: folder.file)
        let expected = try await Self.expected(version: "1")
        #expect(data == expected)
        #expect(Checksums.crc32(Array(data)) == Checksums.crc32(Array(expected)))
        let log = try await Self.log(id)
        #expect(log.map(\.status) == [200, 206])
        #expect(log.last?.range == "bytes=\(Self.cut)-")
        #expect(log.last?.ifRange == "\"v1-\(Self.size)\"")
        #expect(log.last?.sent == Int64(Self.size) - Self.cut)
        #expect(provider.partialDownloads.count == 0)
    }

    @Test func aResumedAttemptThatBreaksOffTooKeepsItsBytes() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        var policy = Self.retrying
        policy.maxAttempts = 3
        let response = try await provider.request(
            Resumable(
                query: "n=\(Self.size)&v=1&rcut=50&id=\(id)", file: folder.file, resumption: .enabled(),
                retryPolicy: policy))
        #expect(response.metrics?.attempts.count == 3)
        let rest = Int64(Self.size) - Self.cut
        let log = try await Self.log(id)
        #expect(log.map(\.status) == [200, 206, 206])
        // The second attempt's half of the rest was appended; the third asked for what was left.
        #expect(log.map(\.range) == [nil, "bytes=\(Self.cut)-", "bytes=\(Self.cut + rest / 2)-"])
        #expect(response.metrics?.attempts.last?.transfer?.bytesReceived == rest - rest / 2)
        #expect(try Data(contentsOf: folder.file) == (try await Self.expected(version: "1")))
        #expect(provider.partialDownloads.count == 0)
    }

    /// A lost connection after the policy's last attempt: the retry limit, with the cut as its
    /// last error.
    static func expectRetriesExhausted(_ error: CourierError, attempts expected: Int) {
        guard case .retryLimitReached(let attempts, let last) = error, case .underlying(let underlying, _) = last else {
            Issue.record("\(error)")
            return
        }
        #expect(attempts == expected)
        #expect((underlying as? URLError)?.code == .networkConnectionLost, "\(last)")
    }

    /// A server that cuts every answer right after its head (no byte of the body): the policy's
    /// attempts and no more, then a later call gets the whole file, identical, and nothing is kept.
    @Test func aServerThatCutsBeforeTheFirstByteGetsBoundedAttempts() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        do throws(CourierError) {
            _ = try await provider.request(
                Resumable(
                    query: "n=\(Self.size)&v=1&cut=-1&id=\(id)", file: folder.file, resumption: .enabled(id: id),
                    retryPolicy: Self.retrying))
            Issue.record("a download cut before its first byte succeeded")
        } catch {
            Self.expectRetriesExhausted(error, attempts: 2)
        }
        let cut = try await Self.log(id)
        #expect(cut.map(\.sent) == [0, 0], "\(cut.map(\.range))")
        let response = try await provider.request(
            Resumable(query: "n=\(Self.size)&v=1&cut=0&id=\(id)", file: folder.file, resumption: .enabled(id: id)))
        #expect((200...206).contains(response.statusCode))
        #expect(try Data(contentsOf: folder.file) == (try await Self.expected(version: "1")))
        #expect(provider.partialDownloads.count == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["download.bin"])
    }

    /// A server that breaks off every answer: the default errors are retried no more than the
    /// policy's attempts, every byte that arrived is kept for a later call (one partial file), and
    /// that call, answered whole, ends with the identical file and nothing kept.
    @Test func aServerThatAlwaysBreaksOffGetsBoundedAttempts() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        var policy = Self.retrying
        policy.maxAttempts = 3
        let failing = Resumable(
            query: "n=\(Self.size)&v=1&rcut=50&every=1&id=\(id)", file: folder.file, resumption: .enabled(id: id),
            retryPolicy: policy)
        do throws(CourierError) {
            _ = try await provider.request(failing)
            Issue.record("a download that always breaks off succeeded")
        } catch {
            Self.expectRetriesExhausted(error, attempts: 3)
        }
        let log = try await Self.log(id)
        #expect(log.map(\.status) == [200, 206, 206])
        #expect(provider.partialDownloads.count == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.file.path))
        let finishing = Resumable(
            query: "n=\(Self.size)&v=1&cut=0&id=\(id)", file: folder.file, resumption: .enabled(id: id))
        let response = try await provider.request(finishing)
        #expect(response.statusCode == 206)
        #expect(try Data(contentsOf: folder.file) == (try await Self.expected(version: "1")))
        #expect(provider.partialDownloads.count == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["download.bin"])
    }

    @Test func aLaterCallResumesFromAFreshURLWithProgressFromTheBytesOnDisk() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        let first = Resumable(
            query: "n=\(Self.size)&v=1&id=\(id)&sig=1", file: folder.file, resumption: .enabled(id: id))
        await #expect(throws: CourierError.self) { try await provider.request(first) }
        #expect(provider.partialDownloads.count == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.file.path))
        // The signed URL expired: the hook gives another for the resumed attempt.
        let fresh = Resumable(
            query: "n=\(Self.size)&v=1&id=\(id)&sig=1", file: folder.file,
            resumption: Self.signedAgain(id: id))
        var events: [ProgressEvent] = []
        for try await event in provider.requestWithProgress(fresh) {
            events.append(event)
        }
        let response = try #require(events.last?.response)
        // The rest arrived (the kept part was not asked for again).
        #expect(response.metrics?.attempts.last?.transfer?.bytesReceived == Int64(Self.size) - Self.cut)
        // Progress counts the bytes already on disk, from the first event (the answer's head,
        // before its body) on.
        #expect(events.first?.download == ProgressEvent.Bytes(completed: Self.cut, total: Int64(Self.size)))
        #expect(events.first?.fraction == Double(Self.cut) / Double(Self.size))
        #expect(events.last?.download == ProgressEvent.Bytes(completed: Int64(Self.size), total: Int64(Self.size)))
        #expect(try Data(contentsOf: folder.file) == (try await Self.expected(version: "1")))
        let log = try await Self.log(id)
        #expect(log.map(\.status) == [200, 206])
        #expect(log.last?.query["sig"] == "2")
        #expect(provider.partialDownloads.count == 0)
    }

    /// A fresh URL on another origin (a storage host) never gets the credentials the first
    /// request was signed with.
    @Test func credentialsDoNotFollowAFreshURLToAnotherOrigin() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        var target = Resumable(
            query: "n=\(Self.size)&v=1&id=\(id)", file: folder.file,
            resumption: .enabled(id: id) { url in
                var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)!
                parts.host = "localhost"  // the same server under another name: another origin
                return parts.url!
            })
        target.headers = ["Authorization": "Bearer secret"]
        await #expect(throws: CourierError.self) { try await provider.request(target) }
        _ = try await provider.request(target)
        let log = try await Self.log(id)
        #expect(log.map(\.status) == [200, 206])
        #expect(log.map(\.authorized) == [true, false])
        #expect(log.last?.host.hasPrefix("localhost") == true)
    }

    @Test func aChangedFileOnTheServerStartsOverCleanly() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        await #expect(throws: CourierError.self) {
            try await provider.request(
                Resumable(query: "n=\(Self.size)&v=1&id=\(id)", file: folder.file, resumption: .enabled(id: id)))
        }
        #expect(provider.partialDownloads.count == 1)
        // Version 2 of the file, answered whole: If-Range no longer matches.
        let response = try await provider.request(
            Resumable(query: "n=\(Self.size)&v=2&cut=0&id=\(id)", file: folder.file, resumption: .enabled(id: id)))
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: folder.file) == (try await Self.expected(version: "2")))
        let log = try await Self.log(id)
        #expect(log.map(\.status) == [200, 200])
        #expect(log.last?.ifRange == "\"v1-\(Self.size)\"")
        #expect(provider.partialDownloads.count == 0)
    }

    @Test(arguments: ["start", "garbage", "etag"])
    func aHostile206StartsOverAndNeverCorruptsTheFile(bad: String) async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        await #expect(throws: CourierError.self) {
            try await provider.request(
                Resumable(query: "n=\(Self.size)&v=1&id=\(id)", file: folder.file, resumption: .enabled(id: id)))
        }
        let response = try await provider.request(
            Resumable(
                query: "n=\(Self.size)&v=1&cut=0&bad=\(bad)&id=\(id)", file: folder.file, resumption: .enabled(id: id)))
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: folder.file) == (try await Self.expected(version: "1")))
        let log = try await Self.log(id)
        // The hostile 206 was dropped, and the file asked for again without Range.
        #expect(log.map(\.status) == [200, 206, 200])
        #expect(log.last?.range == nil)
        #expect(provider.partialDownloads.count == 0)
    }

    /// A restart in the call that got a fresh URL (its offer refused by a 206 that does not
    /// continue the file) asks the fresh URL for the whole file, not the first one, which may have
    /// expired.
    @Test func aRestartAfterAFreshURLGoesToTheFreshURL() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        await #expect(throws: CourierError.self) {
            try await provider.request(
                Resumable(query: "n=\(Self.size)&v=1&id=\(id)&sig=1", file: folder.file, resumption: .enabled(id: id)))
        }
        let response = try await provider.request(
            Resumable(
                query: "n=\(Self.size)&v=1&cut=0&bad=start&id=\(id)&sig=1", file: folder.file,
                resumption: Self.signedAgain(id: id)))
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: folder.file) == (try await Self.expected(version: "1")))
        let log = try await Self.log(id)
        #expect(log.map(\.status) == [200, 206, 200])
        #expect(log.map { $0.query["sig"] } == ["1", "2", "2"])
        #expect(log.last?.range == nil)
        #expect(provider.partialDownloads.count == 0)
    }

    @Test func a206NobodyAskedForIsNeverTheFileNorItsStart() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        // The second half of the file, whole, as the answer to a request for all of it.
        do throws(CourierError) {
            _ = try await provider.request(
                Resumable(
                    query: "n=\(Self.size)&v=1&cut=0&bad=unasked&id=\(id)", file: folder.file,
                    resumption: .enabled(id: id)))
            Issue.record("half the file was taken as the file")
        } catch {
            guard case .underlying(let underlying, _) = error else {
                Issue.record("expected a DownloadResumeFailure, got \(error)")
                return
            }
            #expect(
                underlying as? DownloadResumeFailure
                    == .unrequestedPartialContent(contentRange: "bytes \(Self.size / 2)-\(Self.size - 1)/\(Self.size)"))
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file.path))
        // The same piece broken off, with a retry: it is not kept as the start of the file, so
        // the retry does not ask for "the rest" of it.
        let cutID = id + "-cut"
        await #expect(throws: CourierError.self) {
            try await provider.request(
                Resumable(
                    query: "n=\(Self.size)&v=1&bad=unasked&id=\(cutID)", file: folder.file,
                    resumption: .enabled(id: cutID), retryPolicy: Self.retrying))
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file.path))
        #expect(try await Self.log(cutID).map(\.range) == [nil, nil])
        #expect(provider.partialDownloads.count == 0)
    }

    @Test func a206ForLessThanTheRestKeepsItsBytesForTheNextAttempt() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        await #expect(throws: CourierError.self) {
            try await provider.request(
                Resumable(query: "n=\(Self.size)&v=1&id=\(id)", file: folder.file, resumption: .enabled(id: id)))
        }
        // A valid 206 for the next 1,000 bytes only: not the file yet, but its bytes continue it.
        do throws(CourierError) {
            _ = try await provider.request(
                Resumable(
                    query: "n=\(Self.size)&v=1&short=1000&id=\(id)", file: folder.file, resumption: .enabled(id: id)))
            Issue.record("a file short of its end was taken as the file")
        } catch {
            guard case .underlying(let underlying, _) = error else {
                Issue.record("expected a DownloadResumeFailure, got \(error)")
                return
            }
            #expect(
                underlying as? DownloadResumeFailure
                    == .rangeMismatch(expectedLength: Int64(Self.size), actualLength: Self.cut + 1000))
        }
        #expect(provider.partialDownloads.count == 1)
        let response = try await provider.request(
            Resumable(query: "n=\(Self.size)&v=1&cut=0&id=\(id)", file: folder.file, resumption: .enabled(id: id)))
        #expect(response.statusCode == 206)
        #expect(try Data(contentsOf: folder.file) == (try await Self.expected(version: "1")))
        let log = try await Self.log(id)
        #expect(log.map(\.range) == [nil, "bytes=\(Self.cut)-", "bytes=\(Self.cut + 1000)-"])
        #expect(provider.partialDownloads.count == 0)
    }

    @Test func theDownloadLimitCountsTheBytesAlreadyKept() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        await #expect(throws: CourierError.self) {
            try await provider.request(
                Resumable(query: "n=\(Self.size)&v=1&id=\(id)", file: folder.file, resumption: .enabled(id: id)))
        }
        // The rest alone is within the limit; with the kept bytes the file would not be.
        let limit = Int64(Self.size) - 1
        do throws(CourierError) {
            _ = try await provider.request(
                Resumable(
                    query: "n=\(Self.size)&v=1&cut=0&id=\(id)", file: folder.file, resumption: .enabled(id: id),
                    limits: Limits(maxDownloadBytes: limit)))
            Issue.record("a file over the download limit was accepted")
        } catch {
            guard case .limitExceeded(.downloadBody(let reported)) = error else {
                Issue.record("expected the download limit, got \(error)")
                return
            }
            #expect(reported == limit)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file.path))
        #expect(provider.partialDownloads.count == 0)
    }

    @Test func twoCallsWithOneIdNeverShareTheKeptFile() async throws {
        let (first, second) = (Folder(), Folder())
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        await #expect(throws: CourierError.self) {
            try await provider.request(
                Resumable(query: "n=\(Self.size)&v=1&id=\(id)", file: first.file, resumption: .enabled(id: id)))
        }
        let query = "n=\(Self.size)&v=1&cut=0&id=\(id)"
        async let one = provider.request(Resumable(query: query, file: first.file, resumption: .enabled(id: id)))
        async let two = provider.request(Resumable(query: query, file: second.file, resumption: .enabled(id: id)))
        let statuses = [try await one.statusCode, try await two.statusCode].sorted()
        // One resumes the kept file; the other, finding it taken, asks for the whole file.
        #expect(statuses == [200, 206])
        let expected = try await Self.expected(version: "1")
        #expect(try Data(contentsOf: first.file) == expected)
        #expect(try Data(contentsOf: second.file) == expected)
        #expect(provider.partialDownloads.count == 0)
    }

    @Test func aRangePastTheEndStartsOver() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        await #expect(throws: CourierError.self) {
            try await provider.request(
                Resumable(query: "n=\(Self.size)&tag=same&id=\(id)", file: folder.file, resumption: .enabled(id: id)))
        }
        // The same tag on a smaller file: the kept bytes reach past its end, and the server says 416.
        let smaller = Int(Self.cut) - 1000
        let response = try await provider.request(
            Resumable(
                query: "n=\(smaller)&tag=same&cut=0&id=\(id)", file: folder.file, resumption: .enabled(id: id)))
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: folder.file).count == smaller)
        let log = try await Self.log(id)
        #expect(log.map(\.status) == [200, 416, 200])
        #expect(log.last?.range == nil)
        #expect(provider.partialDownloads.count == 0)
    }

    @Test func withoutResumptionNothingIsKept() async throws {
        let folder = Folder()
        let id = UUID().uuidString
        let provider = Provider<Resumable>()
        let target = Resumable(query: "n=\(Self.size)&v=1&id=\(id)", file: folder.file, resumption: .disabled)
        await #expect(throws: CourierError.self) { try await provider.request(target) }
        await #expect(throws: CourierError.self) { try await provider.request(target) }
        #expect(provider.partialDownloads.count == 0)
        #expect(try await Self.log(id).map(\.range) == [nil, nil])
    }
}
