import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking

    /// The session delegate driven directly, callback by callback, with tasks that never run: the
    /// orders a server and a caller can produce, without a network. (FoundationNetworking only:
    /// a task made without a session is deprecated on Apple platforms.)
    // A regression that leaves a continuation unanswered fails here instead of hanging the run.
    @Suite(.timeLimit(.minutes(1))) struct SessionRouterTests {
        /// A task that stands for one URLSession would run: its identifier and head are given, and
        /// a start or a cancel is only counted.
        final class FakeTask: URLSessionDataTask, @unchecked Sendable {
            // @unchecked: `id` and `head` are set before the task is shared and only read after;
            // the rest is behind a lock.
            let id: Int
            var head: URLResponse?
            private struct Calls {
                var resumes = 0
                var cancels = 0
                var waiter: CheckedContinuation<Void, Never>?
            }
            private let calls = Locked(Calls())

            init(id: Int) {
                self.id = id
                super.init()
            }

            override var taskIdentifier: Int { id }
            override var response: URLResponse? { head }
            override func cancel() { calls.withLock { $0.cancels += 1 } }
            override func resume() {
                let waiter = calls.withLock { calls in
                    calls.resumes += 1
                    defer { calls.waiter = nil }
                    return calls.waiter
                }
                waiter?.resume()
            }

            var resumes: Int { calls.withLock { $0.resumes } }
            var cancels: Int { calls.withLock { $0.cancels } }

            /// Returns once the task has been started.
            func started() async {
                await withCheckedContinuation { continuation in
                    let now = calls.withLock { calls -> Bool in
                        if calls.resumes > 0 { return true }
                        calls.waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            }
        }

        static var url: URL { URL(string: "http://127.0.0.1:9/file")! }

        static func head(_ status: Int, _ fields: [String: String] = [:]) -> HTTPURLResponse {
            HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)!
        }

        /// A router with one transfer registered and started; the reports it made so far.
        struct Harness: Sendable {
            let router = SessionRouter(trust: nil)
            let task: FakeTask
            let ticket: Int
            let reports = Locked<[TransferProgress]>([])

            init(id: Int, limits: Limits = .default) {
                task = FakeTask(id: id)
                ticket = router.register(
                    request: URLRequest(url: SessionRouterTests.url), file: nil,
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

            /// Launches the transfer, runs `events` once its task has started, and returns its answer.
            func run(_ events: @Sendable (Harness) -> Void) async throws -> Response {
                async let answer = launch()
                await task.started()
                events(self)
                // Every run ends with the task's end delivered: nothing of it may be left.
                defer { #expect(router.transfersInTable == 0) }
                return try await answer.head
            }

            /// Launches the transfer with its task (made by `make`, when given) and returns its
            /// answer.
            func launch(make: (@Sendable (Harness) -> FakeTask)? = nil) async throws -> CallAnswer {
                try await withCheckedThrowingContinuation { continuation in
                    router.launch(ticket, continuation: continuation) { [self] in make?(self) ?? task }
                }
            }
        }

        /// A transfer its caller cancelled is over: a head that arrives after is not reported (the
        /// call may be retried, and the next attempt's progress is the one shown).
        @Test func aCancelledTransferReportsNoHead() async {
            let harness = Harness(id: 1)
            await #expect(throws: CancellationError.self) {
                try await harness.run { harness in
                    harness.router.cancel(harness.ticket)
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
                    harness.router.cancel(harness.ticket)
                    harness.complete(URLError(.cancelled))
                }
            }
            let aborted = Harness(id: 4)
            await #expect(throws: CourierError.self) {
                try await aborted.run { harness in
                    harness.receive(Self.head(302, ["Location": "/next"]))
                    harness.router.abort(harness.ticket, with: CourierError.cancelled)
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

        /// A transfer cancelled before it is launched never gets a task.
        @Test func aTransferCancelledBeforeItsLaunchMakesNoTask() async {
            let harness = Harness(id: 6)
            harness.router.cancel(harness.ticket)
            let made = Locked(false)
            await #expect(throws: CancellationError.self) {
                try await harness.launch { harness in
                    made.withLock { $0 = true }
                    return harness.task
                }
            }
            #expect(!made.withLock { $0 })
            #expect(harness.router.transfersInTable == 0)
        }

        /// A transfer that ends while its task is being made (its caller cancels, its upload
        /// watcher aborts) is answered with that end, and the task made is cancelled, never
        /// started.
        @Test(arguments: [false, true])
        func aTransferEndedWhileItsTaskIsMadeNeverStartsIt(aborted: Bool) async {
            let harness = Harness(id: 7)
            let error = await #expect(throws: (any Error).self) {
                try await harness.launch { harness in
                    if aborted {
                        harness.router.abort(harness.ticket, with: CourierError.timedOut(.seconds(1)))
                    } else {
                        harness.router.cancel(harness.ticket)
                    }
                    return harness.task
                }
            }
            if aborted {
                guard case .timedOut? = error as? CourierError else {
                    Issue.record("\(String(describing: error))")
                    return
                }
            } else {
                #expect(error is CancellationError)
            }
            // The router's cancels follow its launches on one queue: the task's cancel is in once
            // another transfer of the router has launched.
            let next = harness.router.register(
                request: URLRequest(url: SessionRouterTests.url), file: nil, progress: nil, limits: .default,
                metrics: TransferMetrics(), elapsed: nil)
            let other = FakeTask(id: 8)
            async let answer = withCheckedThrowingContinuation { continuation in
                harness.router.launch(next, continuation: continuation) { other }
            }
            await other.started()
            harness.router.cancel(next)
            _ = try? await answer
            harness.router.urlSession(URLSession.shared, task: other, didCompleteWithError: URLError(.cancelled))
            #expect(harness.task.resumes == 0)
            #expect(harness.task.cancels == 1)
            #expect(harness.router.transfersInTable == 0)
        }

        /// On Linux the task is made and started on the router's own queue, not on the caller's
        /// thread: FoundationNetworking makes it with a `sync` onto the queue all its sessions
        /// share, which would otherwise hold a thread of the cooperative pool for as long as
        /// another session's callback runs. Once answered, nothing of the transfer is left.
        @Test func theTaskIsMadeOnTheRoutersQueue() async throws {
            let harness = Harness(id: 9)
            let onQueue = Locked<Bool?>(nil)
            async let answer = harness.launch { harness in
                onQueue.withLock { $0 = harness.router.isOnQueue }
                return harness.task
            }
            await harness.task.started()
            harness.receive(Self.head(204))
            harness.complete()
            #expect(try await answer.head.statusCode == 204)
            #expect(onQueue.withLock { $0 } == true)
            #expect(!harness.router.isOnQueue)
            #expect(harness.router.transfersInTable == 0)
        }

        /// Closing the router (the transport's `invalidateAndCancel()`) ends every transfer in its
        /// table with `CourierError.cancelled`: a running one has its task cancelled once, one
        /// entered and not launched yet gets no task. A transfer entered afterwards is refused
        /// without a task, and the session is invalidated once, however often it is closed.
        @Test func closingEndsEveryTransferAndRefusesLaterOnes() async throws {
            let harness = Harness(id: 10)
            async let running = harness.launch()
            await harness.task.started()
            let entered = harness.router.register(
                request: URLRequest(url: SessionRouterTests.url), file: nil, progress: nil, limits: .default,
                metrics: TransferMetrics(), elapsed: nil)
            let (invalidated, signal) = AsyncStream<Void>.makeStream()
            let invalidations = Locked(0)
            for _ in 0..<2 {
                harness.router.close {
                    invalidations.withLock { $0 += 1 }
                    signal.yield()
                }
            }
            for await _ in invalidated { break }
            // The task's cancel was queued before the invalidation, on the same queue.
            #expect(harness.task.cancels == 1)
            harness.complete(URLError(.cancelled))
            let runningError: (any Error)?
            do {
                _ = try await running
                runningError = nil
            } catch {
                runningError = error
            }
            #expect(InvalidationErrors.isCancelled(runningError))

            // Each launch below would count the task it makes; none may be made.
            let made = Locked(0)
            @Sendable func launchedError(_ ticket: Int) async -> (any Error)? {
                await #expect(throws: (any Error).self) {
                    try await withCheckedThrowingContinuation { continuation in
                        harness.router.launch(ticket, continuation: continuation) {
                            made.withLock { $0 += 1 }
                            return FakeTask(id: 11)
                        }
                    }
                }
            }
            #expect(InvalidationErrors.isCancelled(await launchedError(entered)))
            let later = harness.router.register(
                request: URLRequest(url: SessionRouterTests.url), file: nil, progress: nil, limits: .default,
                metrics: TransferMetrics(), elapsed: nil)
            let laterError = await launchedError(later)
            #expect(InvalidationErrors.isClosedRefusal(laterError))
            #expect(made.withLock { $0 } == 0)
            #expect(invalidations.withLock { $0 } == 1)
            #expect(harness.task.resumes == 1)
            #expect(harness.router.transfersInTable == 0)
        }

        /// A close that comes while a task is being made waits for it: the task is cancelled
        /// unstarted and its caller answered with `CourierError.cancelled`, and only then is the
        /// session invalidated (making a task on an invalidated session traps).
        @Test func closingWhileATaskIsMadeInvalidatesAfterIt() async throws {
            let harness = Harness(id: 13)
            let events = Locked<[String]>([])
            let (invalidated, signal) = AsyncStream<Void>.makeStream()
            let error = await #expect(throws: (any Error).self) {
                try await harness.launch { harness in
                    harness.router.close {
                        events.withLock { $0.append("invalidated") }
                        signal.yield()
                    }
                    events.withLock { $0.append("made") }
                    return harness.task
                }
            }
            #expect(InvalidationErrors.isCancelled(error))
            for await _ in invalidated { break }
            #expect(events.withLock { $0 } == ["made", "invalidated"])
            #expect(harness.task.resumes == 0)
            #expect(harness.task.cancels == 1)
            #expect(harness.router.transfersInTable == 0)
        }
    }
#endif
