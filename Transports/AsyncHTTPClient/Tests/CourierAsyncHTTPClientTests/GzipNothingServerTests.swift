import Courier
import CourierAsyncHTTPClient
import CourierTesting
import CourierTransportConformance
import Foundation
import Testing

/// A real server's gzip body of empty stored blocks (`/gzip-nothing`), through a provider: the
/// limit crossed on the wire is `CourierError.limitExceeded` with the limit the caller set, in
/// memory and to a file (which is left nowhere), and the default retry policy does not send the
/// request again. A stream has no limit: it hands over nothing and ends with the server.
@Suite(.enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"))
struct GzipNothingServerTests {
    struct Target: TargetType {
        var baseURL: URL
        var bytes: Int
        var task: HTTPTask
        var path = "gzip-nothing"
        var headers: [String: String] { [:] }
    }

    /// The requests sent again.
    actor Retries: Plugin {
        var count = 0
        func willRetry(_ request: URLRequest, after error: CourierError, delay: Duration, context: RequestContext) {
            count += 1
        }
    }

    /// `bytes` of nothing, or with `untilTheClientLeaves`, nothing sent until the client leaves.
    func target(_ bytes: Int, task: HTTPTask? = nil, untilTheClientLeaves: Bool = false) throws -> Target {
        let fault = try #require(ConformanceServers.fromEnvironment?.fault)
        let parameters = HTTPTask.parameters(
            untilTheClientLeaves ? ["n": .int(bytes), "hold": .int(1)] : ["n": .int(bytes)], encoding: .queryString)
        return Target(baseURL: fault, bytes: bytes, task: task ?? parameters)
    }

    @Test func aBodyOfNothingFailsAtTheLimitAndIsNotRetried() async throws {
        let target = try target(64 << 20)
        let retries = Retries()
        let provider = Provider<Target>(
            transport: AsyncHTTPClientTransport(), plugins: [retries], limits: Limits(maxResponseBytes: 1 << 20),
            retryPolicy: .default)
        await #expect(
            performing: { try await provider.request(target) }, throws: exceeded(.responseBody(limit: 1 << 20)))
        #expect(await retries.count == 0)
    }

    /// Progress while a body of nothing arrives: no byte is reported (none is handed over), no
    /// fraction is made of an unknown length, and the events end with the limit's error.
    @Test func progressOfABodyOfNothingReportsNoBytes() async throws {
        let target = try target(64 << 20)
        let provider = Provider<Target>(
            transport: AsyncHTTPClientTransport(), limits: Limits(maxResponseBytes: 1 << 20), retryPolicy: .default)
        var events: [ProgressEvent] = []
        await #expect(
            performing: { for try await event in provider.requestWithProgress(target) { events.append(event) } },
            throws: exceeded(.responseBody(limit: 1 << 20)))
        #expect(events.count <= 3)
        for event in events {
            #expect((event.download?.completed ?? 0) == 0)
            #expect(event.fraction.map { $0.isFinite } ?? true)
        }
    }

    /// A redirect whose body is nothing, 1 GiB of it: its body is read no further than a redirect's
    /// (64 KiB) and dropped, and the redirect is followed.
    @Test func aRedirectOfNothingIsFollowed() async throws {
        var target = try target(1 << 30)
        target.path = "redirect-gzip-nothing"
        let provider = Provider<Target>(
            transport: AsyncHTTPClientTransport(), limits: Limits(maxResponseBytes: 1 << 20))
        let response = try await provider.request(target)
        #expect(response.statusCode == 200)
        #expect(response.request?.url?.path == "/ok")
    }

    @Test func aDownloadOfNothingFailsAtTheLimitAndLeavesNoFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = DownloadDestination.folder(folder) { _, _ in "nothing" }
        let provider = Provider<Target>(
            transport: AsyncHTTPClientTransport(), limits: Limits(maxDownloadBytes: 1 << 20), retryPolicy: .default)
        let target = try target(
            64 << 20, task: .downloadParameters(["n": .int(64 << 20)], encoding: .queryString, destination: destination)
        )
        await #expect(
            performing: { try await provider.request(target) }, throws: exceeded(.downloadBody(limit: 1 << 20)))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    /// A stream is held to no size: the server's 8 MiB of nothing are read, none handed over, and
    /// the body ends with the server's close (before the gzip end) as an error, not cleanly.
    @Test func aStreamOfNothingHandsOverNothingAndFailsAtTheServersEnd() async throws {
        let provider = Provider<Target>(
            transport: AsyncHTTPClientTransport(), limits: Limits(maxResponseBytes: 1 << 20))
        let stream = try await provider.stream(try target(8 << 20))
        var chunks = 0
        await #expect(throws: CourierError.self) {
            for try await _ in stream.chunks { chunks += 1 }
        }
        #expect(chunks == 0)
    }

    /// A stream's idle timeout holds a body of nothing as it holds a stalled one: bytes keep
    /// coming, but none is handed over, so the reader's wait for the next chunk runs out (on a
    /// test clock, moved once the reader waits) while the server still sends: it sends until the
    /// client leaves, so a test scheduled late never sees the server's end instead.
    @Test func aStreamOfNothingIsHeldByItsIdleTimeout() async throws {
        let clock = TestClock()
        let provider = Provider<Target>(transport: AsyncHTTPClientTransport(), clock: clock)
        let stream = try await provider.stream(try target(0, untilTheClientLeaves: true), idleTimeout: .seconds(5))
        let reader = Task { () -> (chunks: Int, error: CourierError?) in
            var chunks = 0
            do {
                for try await _ in stream.chunks { chunks += 1 }
                return (chunks, nil)
            } catch {
                return (chunks, error as? CourierError)
            }
        }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        let (chunks, error) = await reader.value
        #expect(chunks == 0)
        guard case .timedOut? = error else {
            Issue.record("expected the idle timeout, got \(String(describing: error))")
            return
        }
    }
}
