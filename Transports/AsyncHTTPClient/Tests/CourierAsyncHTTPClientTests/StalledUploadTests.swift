import AsyncHTTPClient
import Courier
import CourierTesting
import CourierTransportConformance
import Foundation
import Testing

@testable import CourierAsyncHTTPClient

/// A server that reads the head and a little of the body, then neither reads nor answers.
/// AsyncHTTPClient starts its `read` timeout only once the whole request is sent (and its `write`
/// timeout is for a body with nothing to give, not for a connection that takes nothing), so such an
/// upload waited for ever without a Courier deadline. `sendIdleTimeout` ends it.
@Suite(.enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"), .timeLimit(.minutes(2)))
struct StalledUploadTests {
    struct Upload: TargetType {
        var baseURL: URL
        var task: HTTPTask
        // Reads 64 KiB, then holds the connection for up to 60 s before it answers 200.
        var path: String { "slow-sink?stall=60&hold=65536" }
        var method: HTTPMethod { .post }
        var headers: [String: String] { [:] }
    }

    enum Body: CaseIterable {
        case inMemory, inMemoryWithProgress, file
    }

    /// More than the sockets' buffers at both ends of the loopback can hold (the largest send
    /// and receive buffers the kernel may grow them to, and 16 MiB): a body they held whole would
    /// be sent, and AsyncHTTPClient's own `read` timeout (60 s) would end the exchange instead.
    static let bodySize: Int = {
        func largest(_ path: String) -> Int? {
            (try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: "\t").last
                .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let buffers =
            (largest("/proc/sys/net/ipv4/tcp_rmem") ?? 64 << 20) + (largest("/proc/sys/net/ipv4/tcp_wmem") ?? 16 << 20)
        return buffers + (16 << 20)
    }()

    static func outcome(_ send: () async throws -> Response) async -> Result<Response, any Error> {
        do {
            return .success(try await send())
        } catch {
            return .failure(error)
        }
    }

    /// The timeout shortened to 1 s: each kind of body ends typed, as a timeout, long before the
    /// server would answer (which an upload left waiting would get: 200).
    @Test(arguments: Body.allCases)
    func anUploadTheServerStopsReadingEndsOnTheIdleTimeout(body: Body) async throws {
        let fault = try #require(ConformanceServers.fromEnvironment?.fault)
        // A client of its own: the stalled connection is not one of the shared pool's, and no
        // other test's connection can keep this one waiting for the pool.
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: AsyncHTTPClientTransport.clientConfiguration())
        var transport = AsyncHTTPClientTransport(client: client, uploadClient: client)
        #expect(transport.sendIdleTimeout == .seconds(60))
        transport.sendIdleTimeout = .seconds(1)
        let provider = Provider<Upload>(transport: transport)
        let started = ContinuousClock.now
        let data = Data(repeating: 0x61, count: Self.bodySize)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stalled-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let outcome: Result<Response, any Error>
        switch body {
        case .inMemory:
            outcome = await Self.outcome { try await provider.request(Upload(baseURL: fault, task: .data(data))) }
        case .inMemoryWithProgress:
            outcome = await Self.outcome {
                var last: Response?
                for try await event in provider.requestWithProgress(Upload(baseURL: fault, task: .data(data))) {
                    last = event.response ?? last
                }
                return try #require(last)
            }
        case .file:
            try data.write(to: file)
            outcome = await Self.outcome { try await provider.request(Upload(baseURL: fault, task: .uploadFile(file))) }
        }
        let took = ContinuousClock.now - started
        try await client.shutdown()
        switch outcome {
        case .success(let response):
            Issue.record("answered \(response.statusCode) after \(took): the upload waited for the server")
        case .failure(CourierError.underlying(let error as URLError, _)):
            #expect(error.code == .timedOut, "after \(took)")
        case .failure(let error):
            Issue.record("expected a timeout, got \(error) after \(took)")
        }
    }
}

/// ``SendWatch`` on a test clock: what counts as a stall.
@Suite struct SendWatchTests {
    /// An operation that runs until `release` is called or it is cancelled.
    final class Pending: Sendable {
        let (events, continuation) = AsyncStream<Int>.makeStream()
        func run() async throws -> Int {
            for await value in events { return value }
            throw CancellationError()
        }
        func release(_ value: Int) { continuation.yield(value) }
    }

    @Test func aBodyThatStopsMovingEndsTimedOut() async {
        let clock = TestClock()
        let watch = SendWatch(idle: .seconds(60), clock: clock)
        let pending = Pending()
        let run = Task { try await watch.guarding { try await pending.run() } }
        // Not started yet: waiting for a connection is not a stall.
        await clock.waitForSleepers()
        clock.advance(by: .seconds(600))
        await clock.waitForSleepers()
        watch.moved()
        // Moving keeps it alive.
        clock.advance(by: .seconds(59))
        watch.moved()
        clock.advance(by: .seconds(59))
        // Woken at 60 s after the first move, it sleeps what is left since the second.
        await clock.waitForSleepers()
        clock.advance(by: .seconds(1))
        await #expect {
            _ = try await run.value
        } throws: { error in
            (error as? URLError)?.code == .timedOut
        }
    }

    @Test func aBodyWhollySentIsNotWatched() async throws {
        let clock = TestClock()
        let watch = SendWatch(idle: .seconds(60), clock: clock)
        let pending = Pending()
        let run = Task { try await watch.guarding { try await pending.run() } }
        await clock.waitForSleepers()
        watch.moved()
        watch.finished()
        // The watcher wakes, sees the body sent and ends; the operation goes on.
        clock.advance(by: .seconds(60))
        clock.advance(by: .seconds(600))
        pending.release(7)
        #expect(try await run.value == 7)
        #expect(clock.sleeperCount == 0)
    }
}
