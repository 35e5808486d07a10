import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session delegate: routes URLSession's callbacks, by the task's entry in its table, to the
/// request waiting for them, writes response bodies to their sink and reports progress. How an
/// entry is made, started and ended from the caller's side: SessionRouter+Transfers.swift.
///
/// URLSession calls a delegate synchronously on its own queue, so the routing table cannot live in
/// an actor; it sits behind ``Locked``.
final class SessionRouter: NSObject, URLSessionDataDelegate, Sendable {
    /// A task's head, as progress sees it.
    enum Head {
        /// No head yet. (A body that came without one is reported from its first byte.)
        case notArrived
        /// A redirect the transport follows or refuses: neither its head nor its body is the
        /// answer's, so neither is reported.
        case hop
        /// The answer's head: reported, and so is its body.
        case answer
    }

    struct Entry: Sendable {
        let request: URLRequest
        /// The waiting request; `nil` from ``register`` until ``launch``.
        var continuation: CheckedContinuation<CallAnswer, any Error>?
        /// Cancelled before ``launch``: no task is made.
        var cancelledEarly = false
        /// The transfer's task, once made and started (see ``start``).
        var task: URLSessionTask?
        let limits: Limits
        /// The body, when it goes to memory.
        var data = Data()
        /// The body's file, when it goes to a file.
        let file: FileSink?
        let progress: (@Sendable (TransferProgress) -> Void)?
        var received: Int64 = 0
        /// The transfer failed while running (a write error, a limit crossed, a refused redirect);
        /// it ends with this error, whatever the task reports.
        var failure: (any Error & Sendable)?
        /// An authentication challenge was refused; the 401 that caused it is the answer.
        var refusedChallenge = false
        /// What is known before the head arrives (bytes to send, redirects followed before this
        /// hop); the rest is filled in as the exchange goes.
        var metrics: TransferMetrics
        /// The provider's clock, read when the head arrives.
        let elapsed: (@Sendable () -> Duration)?
        /// For a streamed response: where the body goes once the head has been handed over.
        let stream: BodyBuffer?
        /// The head was handed over (streams only): the continuation is used up.
        var headDelivered = false
        /// What the head was, for progress.
        var head = Head.notArrived
        /// A redirect's body, read and dropped (see ``unwantedBodyAllowance``).
        var hopBody: Int64 = 0
        /// The body's limit, set up when the first byte arrives.
        var bodyLimit: ResponseBodyLimit?
        /// Courier has asked FoundationNetworking to cancel the task (once per task).
        var cancelIssued = false
        /// Issue 28 (connection details): the task's metrics, when URLSession reported them.
        var taskMetrics: TransferMetrics?
        /// Durable downloads (27): told each head; the file of a transfer that breaks off is kept.
        var headArrived: (@Sendable (Response) -> Void)?

        mutating func modify<R>(_ body: (inout Entry) -> R) -> R {
            body(&self)
        }
    }

    /// Every transfer from ``register`` until FoundationNetworking delivers its end
    /// (`didCompleteWithError`), also when its caller was answered earlier (cancelled): an entry
    /// in the table is what says the task may still be cancelled. Entries are keyed by a ticket
    /// of the router's own, since a transfer is entered before its task exists (see ``launch``);
    /// `tickets` finds a task's entry for the delegate's callbacks.
    struct Table {
        var entries: [Int: Entry] = [:]
        /// A started task's ticket, by its `taskIdentifier`.
        var tickets: [Int: Int] = [:]
        var nextTicket = 0
        /// ``close(then:)`` was called: no task is made from then on.
        var closed = false
        /// Tasks being made (between ``start``'s two checks): the session is not invalidated while
        /// one is, since making a task on an invalidated session traps.
        var making = 0
        /// The session's invalidation, when ``close(then:)`` found a task being made: run by the
        /// ``start`` that makes the last one.
        var pendingInvalidation: (@Sendable () -> Void)?

        /// Runs `body` on the entry of `task` in place, if it has one. Optional chaining reaches
        /// the entry where the table stores it: nothing is copied out and back (which retained and
        /// released each of its references on every callback), and its body `Data`, referenced
        /// once, is appended to without a copy.
        mutating func update<R>(_ task: URLSessionTask, _ body: (inout Entry) -> R) -> R? {
            guard let ticket = tickets[task.taskIdentifier] else { return nil }
            return entries[ticket]?.modify(body)
        }
    }
    let table = Locked(Table())

    /// Transfers entered and not yet forgotten (tests: nothing may be left behind).
    var transfersInTable: Int { table.withLock { $0.entries.count } }
    /// The trust policies to enforce; `nil` when every host gets the system's evaluation.
    let trust: ResolvedTrustPolicies?

    init(trust: ResolvedTrustPolicies?) {
        self.trust = trust
        super.init()
        queue.setSpecific(key: queueKey, value: true)
    }

    /// Where every task of this session is made and started, and every `URLSessionTask.cancel()`
    /// made, one at a time (a cancel only while the task's end has not been delivered, see
    /// ``cancelTask(_:)``).
    ///
    /// On Linux, FoundationNetworking makes, starts and cancels a task with a `sync` onto the
    /// one queue all its sessions share, which is busy for as long as any session's delegate
    /// callback runs (a response body written to its file, here inline: see InlineDelegateQueue);
    /// measured, up to 1.28 s while two 1 GiB downloads ran. Done on the caller's thread, that
    /// wait would hold a thread of Swift's cooperative pool (two threads on a 2-core machine), so
    /// it is done here; this queue's thread may block, the pool's never do. The price: a cancel
    /// waits here behind the starts queued before it (the caller is answered at once all the same,
    /// see ``cancel(_:)``; only FoundationNetworking's cancel waits), and a start whose transfer
    /// ended meanwhile is skipped without a wait. On Apple platforms making and starting a task
    /// does not wait for the session's work, and is done inline.
    let queue = DispatchQueue(label: "Courier.SessionRouter")
    private let queueKey = DispatchSpecificKey<Bool>()

    /// Whether the caller runs on ``queue`` (tests: where tasks are made).
    var isOnQueue: Bool { DispatchQueue.getSpecific(key: queueKey) == true }

    /// Called by a request's task once answered. FoundationNetworking may resume the continuation
    /// on its own thread before the awaiting task has even suspended; the runtime then carries on
    /// without the path ThreadSanitizer watches, and the hand-off of the result looks like a race.
    /// Taking the lock the resuming thread released makes the ordering visible.
    func synchronize() {
        table.withLock { _ in }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        let progress = table.withLock { $0.update(task) { $0.progress } } ?? nil
        progress?(.sent(bytes: totalBytesSent, total: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil))
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        // A streamed response is handed over with its head; the body follows. (Answered inline:
        // FoundationNetworking takes the answer on its own queue without waiting for it.)
        var arrived: (@Sendable (Response) -> Void, URLRequest)?  // Durable downloads (27)
        var started: (@Sendable (TransferProgress) -> Void, method: String?)?
        let http = response as? HTTPURLResponse
        let isHop = http.map(Self.isHop)
        let head = table.withLock { table -> (CheckedContinuation<CallAnswer, any Error>, CallAnswer)? in
            table.update(dataTask) { entry in
                entry.metrics.responseStart = entry.elapsed?()
                arrived = entry.headArrived.map { ($0, entry.request) }
                // Progress starts with the answer's head, not a redirect's (the transport follows
                // it with another task), and not with the first byte of the body: an empty body
                // has none. A transfer already ended (cancelled: its call may be retried) reports
                // nothing more, as for its body.
                if entry.head == .notArrived {
                    entry.head = isHop == true ? .hop : .answer
                    if entry.head == .answer, entry.failure == nil, let progress = entry.progress {
                        started = (progress, entry.request.httpMethod)
                    }
                }
                guard let stream = entry.stream, !entry.headDelivered, entry.failure == nil,
                    let continuation = entry.continuation, let http = response as? HTTPURLResponse
                else { return nil }
                // A redirect that is refused (307/308, re-sent by the transport) comes through
                // here too; its head is handed over like any other, and the transport decides.
                entry.headDelivered = true
                entry.continuation = nil
                // Issue 31: the head and its body, side by side.
                let head = Response(
                    statusCode: http.statusCode, data: Data(), request: entry.request, response: http,
                    transferMetrics: entry.metrics)
                return (continuation, .streamed(StreamedResponse(head: head, body: ResponseBody(buffer: stream))))
            } ?? nil
        }
        if let (headArrived, request) = arrived, let http {
            headArrived(Response(statusCode: http.statusCode, data: Data(), request: request, response: http))
        }
        if let (progress, method) = started {
            progress(.responseStarted(expectedLength: Self.expectedLength(of: response, method: method)))
        }
        completionHandler(.allow)
        if let (continuation, head) = head {
            table.withLock { _ in }
            continuation.resume(returning: head)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        var streamTo: BodyBuffer?
        var fileTo: FileSink?
        var cancelling = false
        var method: String?
        let (progress, received, starting): ((@Sendable (TransferProgress) -> Void)?, Int64, Bool) = table.withLock {
            table in
            table.update(dataTask) { entry in
                guard entry.failure == nil else { return (nil, 0, false) }
                if let stream = entry.stream, entry.headDelivered {
                    if entry.bodyLimit == nil {
                        if Self.hasBothFramings(dataTask.response, contentLength: nil) {
                            cancelling = Self.abort(&entry, with: URLError(.badServerResponse))
                            return (nil, 0, false)
                        }
                        entry.bodyLimit = ResponseBodyLimit(streaming: entry.limits)
                    }
                    entry.received += Int64(data.count)
                    if let crossed = entry.bodyLimit?.crossed(by: entry.received, response: dataTask.response) {
                        cancelling = Self.abort(&entry, with: CourierError.limitExceeded(crossed))
                        return (nil, 0, false)
                    }
                    streamTo = stream
                    return (nil, 0, false)
                }
                // A redirect's body is not the answer's: not kept, not held to the answer's limits,
                // not reported. A little is read so the connection can be used again; past that
                // the task ends, and the redirect answers with its head (see `outcome`).
                // FoundationNetworking hands a redirect over only once its whole body is in (in
                // one piece, just before the task's end): nothing is left to spare there, and a
                // cancel racing that end is not asked for.
                if entry.head == .hop {
                    entry.hopBody += Int64(data.count)
                    #if !canImport(FoundationNetworking)
                        cancelling = entry.hopBody > Self.unwantedBodyAllowance
                    #endif
                    return (nil, 0, false)
                }
                if entry.bodyLimit == nil {
                    let limit = ResponseBodyLimit(toFile: entry.file != nil, limits: entry.limits)
                    // `Content-Length`, read once (each lookup in FoundationNetworking's header
                    // dictionary bridges strings). A body announced larger than allowed fails
                    // before it is read.
                    let announced = ResponseBodyLimit.contentLength(of: dataTask.response)
                    if Self.hasBothFramings(dataTask.response, contentLength: announced) {
                        cancelling = Self.abort(&entry, with: URLError(.badServerResponse))
                        return (nil, 0, false)
                    }
                    if let crossed = limit.announcedCrossing(contentLength: announced) {
                        cancelling = Self.abort(&entry, with: CourierError.limitExceeded(crossed))
                        return (nil, 0, false)
                    }
                    // At most the default limit's worth: with a limit raised (or `.max`), an
                    // announced size is the server's word, and reserving 2^62 bytes traps.
                    if entry.file == nil, announced > 0 {
                        entry.data.reserveCapacity(Int(min(announced, Limits.defaultMaxResponseBytes)))
                    }
                    entry.bodyLimit = limit
                }
                entry.received += Int64(data.count)
                if let crossed = entry.bodyLimit?.crossed(by: entry.received, response: dataTask.response) {
                    cancelling = Self.abort(&entry, with: CourierError.limitExceeded(crossed))
                    return (nil, 0, false)
                }
                if let file = entry.file {
                    fileTo = file
                    do throws(CourierError) { try file.append(data) } catch {
                        cancelling = Self.abort(&entry, with: error)
                        return (nil, 0, false)
                    }
                } else {
                    entry.data.append(data)
                }
                // (A redirect's body never gets here: see above.)
                guard entry.head == .notArrived else { return (entry.progress, entry.received, false) }
                entry.head = .answer
                method = entry.request.httpMethod
                return (entry.progress, entry.received, true)
            } ?? (nil, 0, false)
        }
        if cancelling { cancelTask(for: dataTask) }
        // Written outside the table's lock, in the order the chunks come (the delegate queue is
        // serial); a body whose reader has gone stops the transfer.
        if let streamTo, !streamTo.write(data) {
            if let ticket = ticket(of: dataTask) { stop(ticket) }
        }
        // A disk far behind the network: wait for it here, outside the lock (see FileSink).
        fileTo?.waitForDisk()
        guard let progress else { return }
        if starting {
            progress(.responseStarted(expectedLength: Self.expectedLength(of: dataTask.response, method: method)))
        }
        progress(.received(bytes: received))
    }

    /// A body cut short: FoundationNetworking (libcurl) reports a connection that closes before
    /// `Content-Length` bytes arrived as `URLError(.unknown)` ("transfer closed with N bytes
    /// remaining"); Apple's URLSession and `AsyncHTTPClientTransport` report it as
    /// `.networkConnectionLost`, which ``RetryPolicy/defaultRetryableErrors`` retries (and a
    /// resumable download resumes). Only a known shortfall is renamed: a chunked body cut short
    /// cannot be told apart from a malformed one here, and stays `.unknown`; so does a body whose
    /// `Content-Length` says nothing of its length: one with a `Transfer-Encoding` (which overrides
    /// it, RFC 9112 §6.3), and an answer that has no body (to `HEAD`, a 1xx, 204 or 304).
    static func cutShort(_ error: any Error, response: HTTPURLResponse?, received: Int64, method: String?) -> any Error
    {
        guard let urlError = error as? URLError, urlError.code == .unknown, let response,
            !ContentCoding.isEncoded(response.value(forHTTPHeaderField: "Content-Encoding")),
            response.value(forHTTPHeaderField: "Transfer-Encoding") == nil,
            !ResponseBodyLimit.hasNoBody(status: response.statusCode, method: method)
        else { return error }
        let announced = ResponseBodyLimit.contentLength(of: response)
        guard announced >= 0, received < announced else { return error }
        return URLError(.networkConnectionLost, userInfo: urlError.userInfo)
    }

    /// The most of a redirect's body read before its task is ended: enough for the usual short
    /// page, so the connection is used again (as AsyncHTTPClientTransport does). (On Linux,
    /// FoundationNetworking has read the whole body before it hands the redirect's head over,
    /// and the allowance is not applied.)
    static let unwantedBodyAllowance: Int64 = 64 << 10

    /// The body length to expect, as ``ResponseBodyLimit/expectedLength(of:method:)`` says: none
    /// for an answer that has no body, otherwise `Content-Length`, unless the body is
    /// content-encoded (then it describes the compressed bytes, not the decoded ones URLSession
    /// hands over).
    /// Whether an answer announces both a `Transfer-Encoding` and a `Content-Length`: a sign of
    /// response splitting or smuggling that "ought to be handled as an error" (RFC 9112 §6.3).
    /// libcurl reads the chunks and hands the body over; AsyncHTTPClient's parser refuses the
    /// head. Refused here with the same `URLError(.badServerResponse)` (found by review).
    /// `contentLength`: the length already read (negative when absent), or `nil` to read it.
    static func hasBothFramings(_ response: URLResponse?, contentLength: Int64?) -> Bool {
        guard let http = response as? HTTPURLResponse else { return false }
        let announced =
            contentLength.map { $0 >= 0 } ?? (http.value(forHTTPHeaderField: "Content-Length") != nil)
        return announced && http.value(forHTTPHeaderField: "Transfer-Encoding") != nil
    }

    static func expectedLength(of response: URLResponse?, method: String?) -> Int64? {
        guard let http = response as? HTTPURLResponse else { return nil }
        return ResponseBodyLimit.expectedLength(status: http.statusCode, method: method) {
            (ResponseBodyLimit.contentLength(of: http), http.value(forHTTPHeaderField: "Content-Encoding"))
        }
    }

    /// Whether a head is a redirect Courier follows (or refuses with an error), not the answer.
    static func isHop(_ http: HTTPURLResponse) -> Bool {
        Redirects.isHop(status: http.statusCode, location: http.value(forHTTPHeaderField: "Location"))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Every redirect is refused: the task ends with the redirect response, and the transport
        // follows it by Courier's rules (Transfer.following), the one place they live. Letting
        // FoundationNetworking follow would drop a 307/308 body, read `Location` its own way
        // (`file:///etc/passwd` becomes a path on the same origin) and hide the hops from the
        // metrics. Answered off the delegate queue, which is the session's own (see
        // InlineDelegateQueue), on a thread of its own (BlockingIO.thread): on Linux the global
        // queues are the cooperative pool's few threads, and a busy pool held every hop's answer
        // back (a 20-hop chain passed 60 s under ThreadSanitizer on 2 cores).
        BlockingIO.thread { completionHandler(nil) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        switch challenge.protectionSpace.authenticationMethod {
        #if canImport(FoundationNetworking)
            case NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodHTTPBasic,
                NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodNTLM,
                NSURLAuthenticationMethodNegotiate:
                // FoundationNetworking only: with no credential to offer, `.performDefaultHandling`
                // waits forever, so refuse and let the 401 come back. Apple's URLSession takes the
                // default branch: URL credentials, credential storage, single sign-on and proxy
                // authentication work as the system does them, and an unanswered 401 arrives as a
                // response (refusing would cancel the request there).
                table.withLock { _ = $0.update(task) { $0.refusedChallenge = true } }
                // Answered off the delegate queue, which is the session's own (see InlineDelegateQueue).
                BlockingIO.thread { completionHandler(.cancelAuthenticationChallenge, nil) }
        #endif
        default:
            #if canImport(Security) && !canImport(FoundationNetworking)
                // Server trust and client certificates by the host's policy, when there is one.
                if let trust, answerTrustChallenge(challenge, task: task, trust: trust, completionHandler) {
                    return
                }
            #endif
            // Server trust and client certificates: the system's own evaluation.
            BlockingIO.thread { completionHandler(.performDefaultHandling, nil) }
        }
    }

    // Issue 28 (connection details): URLSession reports the task's metrics before its end (Apple
    // platforms; FoundationNetworking never calls this), read into the response's TransferMetrics.
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        table.withLock { table in
            _ = table.update(task) { entry in
                entry.taskMetrics = TransferMetrics(
                    metrics, bytesSent: task.countOfBytesSent, bytesReceived: entry.received,
                    redirects: entry.metrics.redirects ?? 0)
            }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard
            let entry = table.withLock({ table in
                table.tickets.removeValue(forKey: task.taskIdentifier).flatMap { table.entries.removeValue(forKey: $0) }
            })
        else { return }
        // FoundationNetworking keeps the head of a 301, 302, 303 or 305–308 to itself until the
        // transfer ends, and when it finds no Location it can follow, it never hands that head
        // over (nor the body): the answer's head is known only now. Progress starts with it.
        if entry.head == .notArrived, entry.failure == nil, error == nil || entry.refusedChallenge,
            let progress = entry.progress, let http = task.response as? HTTPURLResponse,
            !Self.isHop(http)
        {
            progress(.responseStarted(expectedLength: Self.expectedLength(of: http, method: entry.request.httpMethod)))
        }
        if let stream = entry.stream, entry.headDelivered {
            // The head went out already: the end (or the error) goes to the body's reader.
            if let failure = entry.failure {
                stream.finish(CourierError(failure))
            } else if let error, !Self.headSuffices(entry, task: task) {
                // A body cut short: the same error as for a whole body (conformance).
                let mapped = Self.cutShort(
                    URLErrors.normalize(error), response: task.response as? HTTPURLResponse,
                    received: entry.received, method: entry.request.httpMethod)
                stream.finish(CourierError(mapped))
            } else {
                // Also the 401 of a refused challenge, which ends its task with an error: the
                // answer is that head, and its body is what arrived.
                stream.finish()
            }
            return
        }
        if let file = entry.file {
            // Durable downloads (27): a transfer that broke off keeps every byte that arrived,
            // written before it is answered.
            if entry.headArrived != nil, entry.failure == nil, error != nil {
                file.finish { [self] _ in answer(entry, with: outcome(of: entry, task: task, error: error)) }
                return
            }
            // An error after a head that is the answer all the same (a refused challenge's 401) or
            // that is followed (a redirect whose body was cut short): the file is what arrived.
            guard entry.failure == nil, error == nil || Self.headSuffices(entry, task: task) else {
                file.discard()
                return answer(entry, with: outcome(of: entry, task: task, error: error))
            }
            // The answer waits for the last write (on the file's queue, not this one).
            file.finish { [self] failure in
                answer(entry, with: failure.map { .failure($0) } ?? outcome(of: entry, task: task, error: nil))
            }
            return
        }
        answer(entry, with: outcome(of: entry, task: task, error: error))
    }

    private func answer(_ entry: Entry, with result: Result<Response, any Error>) {
        // Released after the result is built, so the waiting task's `synchronize()` orders it.
        table.withLock { _ in }
        entry.continuation?.resume(with: result.map { .whole($0) })
    }

    /// Whether a task that ended with an error is answered with its head all the same: the 401
    /// of a refused challenge, and a redirect whose body was cut short (here, past the
    /// allowance), which is followed: its body is not wanted. (FoundationNetworking hands a
    /// redirect's head over only once its body is complete: one the server breaks off fails with
    /// no head to follow.) Never a transfer Courier ended itself (`failure`).
    private static func headSuffices(_ entry: Entry, task: URLSessionTask) -> Bool {
        entry.failure == nil && task.response is HTTPURLResponse && (entry.refusedChallenge || entry.head == .hop)
    }

    private func outcome(of entry: Entry, task: URLSessionTask, error: (any Error)?) -> Result<Response, any Error> {
        if let failure = entry.failure { return .failure(failure) }
        let httpResponse = task.response as? HTTPURLResponse
        if let error, !Self.headSuffices(entry, task: task) {
            // A refused certificate: typed, with the host and the reason.
            if let refused = CourierError.serverTrust(from: error, url: entry.request.url) { return .failure(refused) }
            return .failure(
                Self.cutShort(
                    URLErrors.normalize(error), response: httpResponse, received: entry.received,
                    method: entry.request.httpMethod))
        }
        guard let httpResponse else { return .failure(URLError(.badServerResponse)) }
        var metrics = entry.metrics
        metrics.bytesReceived = entry.received
        if let details = entry.taskMetrics {  // Issue 28 (connection details)
            metrics.httpVersion = details.httpVersion ?? metrics.httpVersion
            metrics.connectionReused = details.connectionReused
            metrics.remoteAddress = details.remoteAddress
            metrics.domainLookup = details.domainLookup
            metrics.connect = details.connect
            metrics.secureConnection = details.secureConnection
        }
        return .success(
            Response(
                statusCode: httpResponse.statusCode, data: entry.data, request: entry.request,
                response: httpResponse, fileURL: entry.file?.url, transferMetrics: metrics))
    }
}
