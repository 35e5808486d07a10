import CourierTesting
import Foundation
import Testing

@testable import Courier

extension Stress {
    /// A reader that leaves a stream early, again and again, on one provider and its
    /// `URLSessionTransport`: by `break`, by cancelling its task, on a limit and on a deadline, against a
    /// fast body (32 MiB written as fast as loopback goes, so the body often finishes while the reader
    /// leaves) and a slow one. Before the router made each task's one cancel on a serial queue of its
    /// own, and only while the task's end had not been delivered, FoundationNetworking trapped within
    /// a few rounds ("Trying to access a behaviour for a task that in not in the registry").
    @Suite(.enabled(if: FaultServer.isAvailable, "needs COURIER_FAULT_URL (run scripts/test)"), .timeLimit(.minutes(5)))
    struct EarlyExitTests {
        enum Exit: String, CaseIterable, Sendable {
            case leaveTheLoop, cancelTheTask, lineLimit, deadline
        }

        enum Body: String, CaseIterable, Sendable {
            /// 32 MiB as fast as the server can write it.
            case fast
            /// A 6-byte chunk every 10 ms.
            case slow
        }

        static let rounds = 60

        static let fastBody = Fault(
            path: "big", task: .parameters(["n": 32 << 20], encoding: .queryString), timeout: nil)

        @Test(arguments: Exit.allCases, Body.allCases)
        func readersThatLeaveEarlyNeverCrashTheProcess(exit: Exit, body: Body) async throws {
            let clock = TestClock()
            let provider = Provider<Fault>(clock: clock)
            for round in 0..<Self.rounds {
                var target: Fault
                switch body {
                case .fast: target = Self.fastBody
                case .slow:
                    target = Fault(
                        path: "stream-watch",
                        task: .parameters(["id": "early-\(exit)-\(round)-\(UUID())"], encoding: .queryString))
                }
                // The provider's clock is a test clock: only the deadline case moves it.
                target.timeout = nil
                if exit == .lineLimit { target.limits = Limits(maxLineBytes: 1 << 10) }
                let stream = try await provider.stream(target, totalTimeout: exit == .deadline ? .seconds(5) : nil)
                switch exit {
                case .leaveTheLoop:
                    for try await _ in stream.chunks { break }
                case .cancelTheTask:
                    let (started, signal) = AsyncStream.makeStream(of: Void.self)
                    let reader = Task {
                        var chunks = 0
                        for try await _ in stream.chunks {
                            chunks += 1
                            if chunks == 1 { signal.yield() }
                        }
                    }
                    var arrivals = started.makeAsyncIterator()
                    await arrivals.next()
                    reader.cancel()
                    _ = await reader.result
                case .lineLimit:
                    // The slow body's lines are short: only a line that never ends crosses the limit.
                    var lines = 0
                    do throws(CourierError) {
                        for try await _ in stream.lines {
                            lines += 1
                            if lines == 3 { break }
                        }
                    } catch .limitExceeded(.line) {}
                case .deadline:
                    var chunks = stream.chunks.makeAsyncIterator()
                    _ = try await chunks.next()
                    clock.advance(by: .seconds(5))
                    do throws(CourierError) {
                        while try await chunks.next() != nil {}
                        // The fast body may have arrived whole before the clock moved.
                        if body == .slow { Issue.record("round \(round): the body ended before its deadline") }
                    } catch .timedOut {}
                }
            }
        }

        /// The line limit ending an event source (an event stream whose one line never ends).
        @Test func eventSourcesEndedByTheLineLimitNeverCrashTheProcess() async throws {
            let provider = Provider<Fault>()
            var target = Self.fastBody
            target.limits = Limits(maxLineBytes: 1 << 20)
            for round in 0..<Self.rounds {
                do throws(CourierError) {
                    for try await _ in provider.eventSource(target) {
                        Issue.record("round \(round): an event arrived")
                    }
                } catch .limitExceeded(.line) {}
            }
        }
    }
}
