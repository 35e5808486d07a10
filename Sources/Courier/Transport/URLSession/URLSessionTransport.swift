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
    /// The session requests run on. Not public: a caller that invalidated it and sent again
    /// would make URLSession trap ("Session invalidated"); ``invalidateAndCancel()`` is the safe
    /// way, and ``configuration`` reads its settings. Tests and the memory check watch its release.
    @_spi(Testing) public let session: URLSession
    private let router: SessionRouter
    /// The configuration's `httpAdditionalHeaders`, taken out of the session and added to each
    /// transfer's first request where it lacks the field. URLSession adds them to every task, and
    /// this transport makes one task per redirect hop: an `Authorization` set there went to every
    /// origin a redirect led to, past the credential stripping of
    /// ``Transfer/following(redirect:redirects:)``. Found by review.
    private let additionalHeaders: [(name: String, value: String)]

    /// A configuration suited to a library: `.ephemeral` (nothing written to disk) with no
    /// `URLCache`, since cancelling a task right after it starts has crashed FoundationNetworking
    /// when a cache is set, and with cookies off: neither stored nor sent. FoundationNetworking's
    /// cookie store has no bound, and a server that sets ~1,800 cookies of 4 KB makes every later
    /// request to it fail ("Out of memory"). To use cookies, set `httpCookieStorage`,
    /// `httpShouldSetCookies` and `httpCookieAcceptPolicy` on a configuration of your own, for
    /// servers you trust.
    public static func defaultConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        return configuration
    }

    /// Creates a transport with its own session and the system's trust evaluation.
    /// - Parameter configuration: The session configuration. Default: ``defaultConfiguration()``.
    ///
    /// The configuration's `httpAdditionalHeaders` are sent with each request that does not set
    /// the same field, as URLSession would, but by the transport, so a redirect's rules apply to
    /// them: a credential among them does not follow a redirect to another origin. The session's
    /// own configuration (``configuration``) has none.
    public init(configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration()) {
        let router = SessionRouter(trust: nil)
        self.router = router
        let (configuration, headers) = Self.separatingAdditionalHeaders(configuration)
        additionalHeaders = headers
        self.session = URLSession(
            configuration: configuration, delegate: router, delegateQueue: InlineDelegateQueue())
    }

    /// A copy of `configuration` without `httpAdditionalHeaders`, and those headers (names that
    /// are not strings are dropped, as URLSession drops them; other values are written out).
    private static func separatingAdditionalHeaders(
        _ configuration: URLSessionConfiguration
    ) -> (URLSessionConfiguration, [(name: String, value: String)]) {
        guard let extra = configuration.httpAdditionalHeaders, !extra.isEmpty,
            let copy = configuration.copy() as? URLSessionConfiguration
        else { return (configuration, []) }
        copy.httpAdditionalHeaders = nil
        let headers = extra.compactMap { key, value -> (name: String, value: String)? in
            guard let name = key.base as? String else { return nil }
            return (name, value as? String ?? "\(value)")
        }
        return (copy, headers.sorted { $0.name < $1.name })
    }

    /// Creates a transport with its own session and trust policies per host.
    ///
    /// On Apple platforms every part of a ``TrustPolicy`` is enforced, in the session delegate's
    /// server-trust and client-certificate challenges; a client identity must be PKCS #12. On Linux
    /// FoundationNetworking (libcurl) reads only the system's CA bundle and never asks its delegate
    /// about server trust, so only ``TrustPolicy/system`` can be honoured there: anything else is
    /// refused here, with the alternative named (see <doc:TLSAndTrust>).
    ///
    /// - Parameters:
    ///   - configuration: The session configuration. Default: ``defaultConfiguration()``.
    ///   - trust: The policies, by host.
    /// - Throws: ``TrustConfigurationError`` for a setting this platform cannot enforce or a value
    ///   that cannot be read.
    public init(
        configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration(), trust: TrustPolicies
    ) throws(TrustConfigurationError) {
        let resolved = try ResolvedTrustPolicies(trust)
        for policy in resolved.all { try Self.checkSupported(policy) }
        let router = SessionRouter(trust: resolved.all.allSatisfy(\.isSystem) ? nil : resolved)
        self.router = router
        let (configuration, headers) = Self.separatingAdditionalHeaders(configuration)
        additionalHeaders = headers
        self.session = URLSession(
            configuration: configuration, delegate: router, delegateQueue: InlineDelegateQueue())
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// A copy of the session's configuration: changing it changes nothing. (FoundationNetworking
    /// hands out the session's own object, which later readers would see changed.)
    public var configuration: URLSessionConfiguration {
        session.configuration.copy() as? URLSessionConfiguration ?? session.configuration
    }

    /// Ends this transport's use: every transfer in flight (sent before this call, started or
    /// not) ends with ``CourierError/cancelled`` and its task, if any, is cancelled; a transfer
    /// sent afterwards is refused with
    /// ``CourierError/invalidUse(_:)`` and nothing reaches the network, and the session is
    /// invalidated once no task is being made, which releases it when its tasks have reported
    /// their end. Calling it again does nothing. Without it, the session is invalidated when the
    /// transport is released, letting the transfers still running finish.
    public func invalidateAndCancel() {
        // FoundationNetworking's own `invalidateAndCancel()` cancels tasks that may have just
        // finished, which traps there (see SessionRouter.cancelTask); the router cancels its own,
        // once each, and the session is only told to invalidate.
        router.close { [session] in session.finishTasksAndInvalidate() }
    }

    /// Runs a transfer, streaming both ways: a file body is uploaded from the file, a file
    /// destination is written chunk by chunk as the response arrives, and progress is reported as
    /// bytes move. On failure or cancellation a partly written destination file is removed, unless
    /// ``Transfer/downloadHeadArrived`` is set: then a transfer that breaks off keeps every byte
    /// that arrived, for the provider to resume from.
    ///
    /// The transfer's ``Transfer/limits`` hold while the body arrives: a body larger than allowed
    /// (after decompression), or one that decompresses beyond the ratio, ends the request with
    /// ``CourierError/limitExceeded(_:)`` as soon as it crosses the line.
    ///
    /// Redirects are followed by the transport itself, one task per hop, with Courier's rules
    /// (``Transfer/following(redirect:redirects:)``): the session follows none on its own. The
    /// response carries ``Response/transferMetrics``: bytes each way, the redirects followed and
    /// when the final head arrived.
    public func send(_ transfer: Transfer) async throws -> Response {
        try await exchange(transfer, streaming: false).head
    }

    /// Runs a transfer and returns when the response head arrives; the body follows through the
    /// returned ``StreamedResponse/body`` as it arrives, with backpressure that never makes
    /// URLSession's delegate queue wait for the reader (see ``ResponseBody``). Redirects, schemes, limits (other than
    /// the total body size, which a stream does not have) and cancellation are as for
    /// ``send(_:)-(Transfer)``; the body's reader going away cancels the task.
    public func stream(_ transfer: Transfer) async throws -> StreamedResponse {
        var transfer = transfer
        transfer.destination = .memory
        switch try await exchange(transfer, streaming: true) {
        case .streamed(let streamed):
            return streamed
        case .whole(let response):
            // A refused authentication challenge answers with the whole response: the body is what
            // arrived.
            return StreamedResponse(head: response, body: ResponseBody(response.data))
        }
    }

    /// Sends the transfer and follows redirects by Courier's rules, one hop per task, up to the
    /// answer. The one redirect decision is ``Transfer/following(redirect:redirects:)``, as in
    /// every transport; the session delegate refuses every redirect (see SessionRouter).
    private nonisolated(nonsending) func exchange(_ transfer: Transfer, streaming: Bool) async throws -> CallAnswer {
        var current = transfer
        if !additionalHeaders.isEmpty {
            for (name, value) in additionalHeaders where current.request.value(forHTTPHeaderField: name) == nil {
                current.request.setValue(value, forHTTPHeaderField: name)
            }
            // What goes on the wire is checked, these fields too.
            try RequestValidation.validate(current.request)
        }
        var redirects = 0
        while true {
            let answer = try await sendOnce(current, redirects: redirects, streaming: streaming)
            let next: Transfer?
            do {
                next = try current.following(redirect: answer.head, redirects: redirects)
            } catch {
                Self.discard(answer)
                throw error
            }
            guard let next else { return answer }
            // The redirect's own body is not wanted: its transfer ends here.
            Self.discard(answer)
            redirects += 1
            current = next
        }
    }

    /// Ends what a redirect response left: its streamed body, or its file (the next hop writes
    /// the destination anew).
    private static func discard(_ answer: CallAnswer) {
        answer.discard()
        if let file = answer.head.fileURL { try? FileManager.default.removeItem(at: file) }
    }

    private nonisolated(nonsending) func sendOnce(
        _ transfer: Transfer, redirects: Int, streaming: Bool
    ) async throws -> CallAnswer {
        // Checked on every hop: nothing goes to a scheme that is not allowed (FoundationNetworking
        // would speak FTP, then trap).
        try transfer.checkDestination()
        var uploadSize: UInt64?
        if case .file(let url) = transfer.body {
            uploadSize = try FileBody.regularFileSize(url)
        }
        var file: FileSink?
        if case .file(let url) = transfer.destination {
            file = FileSink(url: url)
        }
        // A streamed body: when its reader goes, the transfer is stopped.
        let stream = streaming ? BodyBuffer(limits: transfer.limits) : nil
        // Entered before anything can cancel it; the router's table is the only lock involved.
        let sent = uploadSize.map { Int64($0) } ?? Int64(transfer.request.httpBody?.count ?? 0)
        let ticket = router.register(
            request: transfer.request, file: file, progress: transfer.progress, limits: transfer.limits,
            metrics: TransferMetrics(bytesSent: sent, redirects: redirects), elapsed: transfer.elapsed, stream: stream,
            headArrived: transfer.downloadHeadArrived)
        stream?.onTermination { [router] in router.stop(ticket) }
        // See SessionRouter.synchronize: the router resumes on FoundationNetworking's thread.
        defer { router.synchronize() }
        // A file body that changes size while it is sent would stall FoundationNetworking until the
        // deadline; a watcher notices and ends the request at once.
        var watcher: Task<Void, Never>?
        if let uploadSize, let url = transfer.body.fileURL {
            watcher = Task { [router] in
                await FileBody.watch(url, size: uploadSize) { error in router.abort(ticket, with: error) }
            }
        }
        defer { watcher?.cancel() }
        // The task is made and started by the router, off the cooperative pool (see
        // SessionRouter.queue); a transfer that ends before its start gets none. The closure
        // holds the transport: its deinit invalidates the session, and making a task on an
        // invalidated session traps.
        let request = transfer.request
        let make: @Sendable () -> URLSessionTask =
            switch transfer.body {
            case .inRequest: { [self] in session.dataTask(with: request) }
            case .file(let url): { [self] in session.uploadTask(with: request, fromFile: url) }
            }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    router.launch(ticket, continuation: continuation, make: make)
                }
            } onCancel: { [router] in
                router.cancel(ticket)
            }
        } catch {
            // Durable downloads (27): a download the provider may resume keeps its file.
            if case .file(let url) = transfer.destination, transfer.downloadHeadArrived == nil {
                try? FileManager.default.removeItem(at: url)
            }
            throw error
        }
    }
}
