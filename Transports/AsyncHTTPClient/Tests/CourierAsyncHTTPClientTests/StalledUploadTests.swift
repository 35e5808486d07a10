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
        var path = "slow-sink?stall=60&hold=65536"
        var method: HTTPMethod { .post }
        var headers: [String: String] { [:] }
    }

    enum Body: CaseIterable {
        case inMemory, inMemoryWithProgress, file, resentAfterA307
    }

    /// More than the sockets' buffers at both ends of the loopback can hold (the largest send
    /// and receive buffers the kernel may grow them to, and 32 MiB: the body may run 9 MiB ahead
    /// of its connection, see Pacing): a body they held whole would be sent, and AsyncHTTPClient's
    /// own `read` timeout would end the exchange instead.
    static let bodySize: Int = {
        func largest(_ path: String) -> Int? {
            (try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: "\t").last
                .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let buffers =
            (largest("/proc/sys/net/ipv4/tcp_rmem") ?? 64 << 20) + (largest("/proc/sys/net/ipv4/tcp_wmem") ?? 16 << 20)
        return buffers + (32 << 20)
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
        // Its `read` timeout outlasts the server's hold: a body AsyncHTTPClient took whole (as
        // bodies in memory once went) would be answered 200, not time out on it.
        var configuration = AsyncHTTPClientTransport.clientConfiguration()
        configuration.timeout.read = .seconds(120)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
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
        case .resentAfterA307:
            // Sent whole to the first hop (the watch rests), then again to the slow sink.
            outcome = await Self.outcome {
                try await provider.request(Upload(baseURL: fault, task: .data(data), path: "redirect-307-stall"))
            }
        case .file:
            try data.write(to: file)
            outcome = await Self.outcome { try await provider.request(Upload(baseURL: fault, task: .uploadFile(file))) }
        }
        let took = ContinuousClock.now - started
        switch outcome {
        case .failure(CourierError.underlying(let error as URLError, _)) where error.code == .timedOut:
            // The stalled request was cancelled, its connection closed: the client shuts down.
            try await client.shutdown()
            return
        case .success(let response):
            Issue.record("answered \(response.statusCode) after \(took): the upload waited for the server")
        case .failure(let error):
            Issue.record("expected a timeout, got \(error) after \(took)")
        }
        // An answer that came while the body was still going out leaves the upload running
        // (AsyncHTTPClient goes on sending after an early 2xx), and shutting the client down
        // would wait for it: it is shut down without waiting, so the failure ends the test.
        Task { try? await client.shutdown() }
    }
}

/// ``SendWatch`` on a test clock: what counts as a stall.
@Suite(.timeLimit(.minutes(1))) struct SendWatchTests {
    /// A value to wait for, released by the test; waiting for it ignores cancellation (an
    /// operation that finishes all the same).
    final class Pending: Sendable {
        let (events, continuation) = AsyncStream<Int>.makeStream()
        func release(_ value: Int) { continuation.yield(value) }
        /// Throws when its task is cancelled before the value comes.
        func run() async throws -> Int {
            for await value in events { return value }
            throw CancellationError()
        }
        /// The value, whatever happens to the waiting task.
        func value() -> Task<Int, Never> {
            Task {
                for await value in events { return value }
                return -1
            }
        }
    }

    static func isTimedOut(_ error: any Error) -> Bool { (error as? URLError)?.code == .timedOut }

    /// A watch (60 s) on a test clock guarding a pending operation, its watcher asleep.
    static func guardedRun() async -> (TestClock, SendWatch, Pending, Task<Int, any Error>) {
        let clock = TestClock()
        let watch = SendWatch(idle: .seconds(60), clock: clock)
        let pending = Pending()
        let run = Task { try await watch.guarding { try await pending.run() } }
        await clock.waitForSleepers()
        return (clock, watch, pending, run)
    }

    @Test func aBodyThatStopsMovingEndsTimedOut() async {
        // Every call below is made while the watcher sleeps: it was seen asleep, or its
        // deadline has not come.
        let (clock, watch, _, run) = await Self.guardedRun()
        // The connection has not asked for the body: waiting for one is not a stall, and the
        // head of an answer does not start the count.
        watch.answered()
        clock.advance(by: .seconds(600))
        await clock.waitForSleepers()
        watch.asked(hop: SendWatch.firstHop)
        // Moving keeps it going: the next part asked for, or bytes of the answer.
        clock.advance(by: .seconds(59))
        watch.asked(hop: SendWatch.firstHop)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers()
        clock.advance(by: .seconds(58))
        watch.answered()
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers()
        // 60 s after the answer's bytes.
        clock.advance(by: .seconds(59))
        await #expect(performing: { _ = try await run.value }, throws: Self.isTimedOut)
    }

    /// Resting once the body was sent, and watched again when a 307 sends it again; the first
    /// hop's body, still asking in its own task, changes nothing then.
    @Test func aBodyWhollySentRestsUntilTheNextHopsBodyStarts() async {
        let (clock, watch, _, run) = await Self.guardedRun()
        watch.asked(hop: SendWatch.firstHop)
        watch.sent(hop: SendWatch.firstHop)
        for _ in 0..<10 {
            clock.advance(by: .seconds(60))
            await clock.waitForSleepers()
        }
        let hop = watch.nextHop()
        watch.asked(hop: SendWatch.firstHop)
        clock.advance(by: .seconds(60))
        await clock.waitForSleepers()
        watch.asked(hop: hop)
        watch.sent(hop: SendWatch.firstHop)
        clock.advance(by: .seconds(60))
        await #expect(performing: { _ = try await run.value }, throws: Self.isTimedOut)
    }

    /// An operation that finishes although the stall cancelled it keeps its result (a download's
    /// file is the caller's then, not left behind under an error).
    @Test func aResultThatCameAllTheSameStands() async throws {
        let clock = TestClock()
        let watch = SendWatch(idle: .seconds(60), clock: clock)
        let pending = Pending()
        let value = pending.value()
        let (cancelled, cancel) = AsyncStream<Void>.makeStream()
        let run = Task {
            try await watch.guarding {
                await withTaskCancellationHandler {
                    await value.value
                } onCancel: {
                    cancel.yield()
                }
            }
        }
        await clock.waitForSleepers()
        watch.asked(hop: SendWatch.firstHop)
        // Stalled at 60 s: the operation is cancelled, and finishes all the same.
        clock.advance(by: .seconds(60))
        for await _ in cancelled { break }
        pending.release(7)
        #expect(try await run.value == 7)
    }

    @Test func aBodyWhollySentIsNotTimedOut() async throws {
        let (clock, watch, pending, run) = await Self.guardedRun()
        watch.asked(hop: SendWatch.firstHop)
        watch.sent(hop: SendWatch.firstHop)
        clock.advance(by: .seconds(600))
        pending.release(7)
        #expect(try await run.value == 7)
    }
}
