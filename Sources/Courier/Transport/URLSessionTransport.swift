import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default transport: a `URLSession` of its own, driven through a session delegate.
///
/// Each transport owns one session, so providers (and the tests that make them) never share
/// connections, cookies or caches. Requests run as delegate-driven data tasks rather than through
/// the async convenience methods, because on Linux only the session delegate can answer an
/// authentication challenge, and an unanswered `WWW-Authenticate: Basic` challenge hangs
/// FoundationNetworking forever. Here a challenge without a credential is refused at once and
/// the 401 comes back as a response.
///
/// Cancelling the calling Swift task cancels the `URLSessionTask`, also when the cancel arrives
/// before the task has started (it is latched and the task never starts).
public final class URLSessionTransport: Transport {
    /// The session requests run on. Do not change its delegate.
    public let session: URLSession
    private let router: SessionRouter

    /// A configuration suited to a library: `.ephemeral` (its own cookie store, nothing written to
    /// disk) with no `URLCache`, since cancelling a task right after it starts has crashed
    /// FoundationNetworking when a cache is set.
    public static func defaultConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }

    /// Creates a transport with its own session.
    /// - Parameter configuration: The session configuration. Default: ``defaultConfiguration()``.
    public init(configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration()) {
        let router = SessionRouter()
        self.router = router
        self.session = URLSession(
            configuration: configuration, delegate: router, delegateQueue: InlineDelegateQueue())
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    public func send(_ request: URLRequest) async throws -> Response {
        try await send(Transfer(request: request))
    }

    /// Runs a transfer, streaming both ways: a file body is uploaded from the file, a file
    /// destination is written chunk by chunk as the response arrives, and progress is reported as
    /// bytes move. On failure or cancellation a partly written destination file is removed.
    public func send(_ transfer: Transfer) async throws -> Response {
        if transfer.progress == nil, case .memory = transfer.destination {
            return try await sendBuffered(transfer)
        }
        var file: SessionRouter.FileSink?
        if case .file(let url) = transfer.destination {
            file = try SessionRouter.FileSink(url: url)
        }
        let latch = CancellationLatch()
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let task: URLSessionTask =
                        switch transfer.body {
                        case .inRequest: session.dataTask(with: transfer.request)
                        case .file(let url): session.uploadTask(with: transfer.request, fromFile: url)
                        }
                    router.register(
                        task, request: transfer.request, file: file, progress: transfer.progress,
                        continuation: continuation)
                    if latch.start(task) {
                        task.resume()
                    } else {
                        router.fail(task, with: CancellationError())
                    }
                }
            } onCancel: {
                latch.cancel()
            }
        } catch {
            if case .file(let url) = transfer.destination {
                try? FileManager.default.removeItem(at: url)
            }
            throw error
        }
    }
}

extension URLSessionTransport {
    /// The fast path for a response body that goes to memory with no progress: a completion-handler
    /// task, so FoundationNetworking buffers the body itself and the result takes one hop through
    /// the delegate queue instead of one per chunk plus one for completion. The session delegate
    /// still answers authentication challenges for such tasks.
    private func sendBuffered(_ transfer: Transfer) async throws -> Response {
        let latch = CancellationLatch()
        let router = router
        let request = transfer.request
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Response, any Error>) in
                let identifier = Locked(-1)
                let completion: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
                    let refused = router.takeRefusedChallenge(identifier.withLock { $0 })
                    if let error {
                        // A refused challenge ends the task with -999; the 401 is the answer.
                        if let refused {
                            continuation.resume(
                                returning: Response(
                                    statusCode: refused.statusCode, data: data ?? Data(), request: request,
                                    response: refused))
                        } else {
                            continuation.resume(throwing: URLErrors.normalize(error))
                        }
                        return
                    }
                    guard let http = response as? HTTPURLResponse else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                        return
                    }
                    continuation.resume(
                        returning: Response(statusCode: http.statusCode, data: data ?? Data(), request: request, response: http))
                }
                let task: URLSessionTask =
                    switch transfer.body {
                    case .inRequest: session.dataTask(with: request, completionHandler: completion)
                    case .file(let url): session.uploadTask(with: request, fromFile: url, completionHandler: completion)
                    }
                identifier.withLock { $0 = task.taskIdentifier }
                if latch.start(task) {
                    task.resume()
                } else {
                    // Never started, so its completion handler will never run.
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            latch.cancel()
        }
    }
}

/// Remembers a cancel that arrives before the task exists, so it is never lost.
final class CancellationLatch: Sendable {
    private enum State {
        case idle
        case running(URLSessionTask)
        case cancelled
    }

    private let state = Locked(State.idle)

    /// Records the task; returns `false` when the request was already cancelled.
    func start(_ task: URLSessionTask) -> Bool {
        state.withLock { state in
            if case .cancelled = state { return false }
            state = .running(task)
            return true
        }
    }

    func cancel() {
        let task: URLSessionTask? = state.withLock { state in
            defer { state = .cancelled }
            if case .running(let task) = state { return task }
            return nil
        }
        task?.cancel()
    }
}
