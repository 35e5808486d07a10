import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking

    /// The session delegate driven directly, callback by callback, with tasks that never run: the
    /// orders a server and a caller can produce, without a network. (FoundationNetworking only:
    /// a task made without a session is deprecated on Apple platforms.)
    @Suite struct SessionRouterTests {
        /// A task that stands for one URLSession would run: its identifier and head are given, and
        /// a cancel is only counted.
        final class FakeTask: URLSessionDataTask, @unchecked Sendable {
            // @unchecked: the fields are set before the task is shared and only read after.
            let id: Int
            var head: URLResponse?
            private let cancels = Locked(0)

            init(id: Int) {
                self.id = id
                super.init()
            }

            override var taskIdentifier: Int { id }
            override var response: URLResponse? { head }
            override func cancel() { cancels.withLock { $0 += 1 } }
        }

        static var url: URL { URL(string: "http://127.0.0.1:9/file")! }

        static func head(_ status: Int, _ fields: [String: String] = [:]) -> HTTPURLResponse {
            HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)!
        }

        /// A router with one transfer registered and started; the reports it made so far.
        struct Harness: Sendable {
            let router = SessionRouter(trust: nil)
            let task: FakeTask
            let reports = Locked<[TransferProgress]>([])

            init(id: Int, limits: Limits = .default) {
                task = FakeTask(id: id)
                router.register(
                    task, request: URLRequest(url: SessionRouterTests.url), file: nil,
                    progress: { [reports] report in reports.withLock { $0.append(report) } }, limits: limits,
                    metrics: TransferMetrics(), elapsed: nil)
            }

            /// The head arrives (the task's response is set first, as URLSession does).
            func receive(_ head: HTTPURLResponse) {
                task.head = head
                router.urlSession(URLSession.shared, dataTask: task, didReceive: head) { _ in }
            }

            func receive(_ data: Data) {
                router.urlSession(URLSession.shared, dataTask: task, didReceive: data)
            }

            func complete(_ error: (any Error)? = nil) {
                router.urlSession(URLSession.shared, task: task, didCompleteWithError: error)
            }

            /// Starts the transfer, runs `events` while it waits, and returns its answer.
            func run(_ events: @Sendable (Harness) -> Void) async throws -> Response {
                let answer = try await withCheckedThrowingContinuation { continuation in
                    #expect(router.start(task, continuation: continuation) == nil)
                    events(self)
                }
                return answer.head
            }
        }

        /// A transfer its caller cancelled is over: a head that arrives after is not reported (the
        /// call may be retried, and the next attempt's progress is the one shown).
        @Test func aCancelledTransferReportsNoHead() async {
            let harness = Harness(id: 1)
            await #expect(throws: CancellationError.self) {
                try await harness.run { harness in
                    harness.router.cancel(harness.task)
                    harness.receive(Self.head(200, ["Content-Length": "10"]))
                    harness.receive(Data("0123456789".utf8))
                    harness.complete(URLError(.cancelled))
                }
            }
            #expect(harness.reports.withLock { $0 }.isEmpty)
        }

        /// A redirect's body is dropped, held to no limit, and not reported; when its task ends
        /// with an error after the head (Apple platforms end it past the allowance), the
        /// redirect is answered with its head, to be followed.
        @Test func aRedirectWhoseBodyBreaksOffIsAnsweredWithItsHead() async throws {
            let harness = Harness(id: 2, limits: Limits(maxResponseBytes: 10))
            let response = try await harness.run { harness in
                harness.receive(Self.head(302, ["Location": "/next", "Content-Length": "1000000"]))
                harness.receive(Data(count: 100_000))
                harness.complete(URLError(.networkConnectionLost))
            }
            #expect(response.statusCode == 302)
            #expect(response.data.isEmpty)
            #expect(harness.reports.withLock { $0 }.isEmpty)
        }

        /// A redirect is followed on its head only when nothing but its body failed: a transfer
        /// its caller cancelled, or one Courier ended, ends with that error.
        @Test func aRedirectCancelledOrAbortedIsNotFollowed() async throws {
            let cancelled = Harness(id: 3)
            await #expect(throws: CancellationError.self) {
                try await cancelled.run { harness in
                    harness.receive(Self.head(302, ["Location": "/next"]))
                    harness.router.cancel(harness.task)
                    harness.complete(URLError(.cancelled))
                }
            }
            let aborted = Harness(id: 4)
            await #expect(throws: CourierError.self) {
                try await aborted.run { harness in
                    harness.receive(Self.head(302, ["Location": "/next"]))
                    harness.router.abort(harness.task, with: CourierError.cancelled)
                    harness.complete(URLError(.cancelled))
                }
            }
        }

        /// A 302 without a Location is the answer: its head and body are reported and kept.
        @Test func aRedirectWithoutALocationIsTheAnswer() async throws {
            let harness = Harness(id: 5)
            let response = try await harness.run { harness in
                harness.receive(Self.head(302, ["Content-Length": "5"]))
                harness.receive(Data("moved".utf8))
                harness.complete()
            }
            #expect(response.statusCode == 302)
            #expect(response.data == Data("moved".utf8))
            let reports = harness.reports.withLock { $0 }
            #expect(reports.count == 2)
            guard case .responseStarted(let expected)? = reports.first, case .received(let bytes)? = reports.last
            else {
                Issue.record("\(reports)")
                return
            }
            #expect(expected == 5)
            #expect(bytes == 5)
        }
    }
#endif
