import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What makes two prepared requests the same: method, URL, headers and body bytes (for a file
/// upload, the file as it is now; for a multipart body built at send time, its parts), and how the exchange is
/// made: the limits it is held to (a caller whose target allows less, a smaller body or fewer
/// schemes, never receives an answer fetched under another's), whether and how it is stubbed (a
/// caller that is not stubbed never receives a sample, and a stubbed one never reaches the
/// network), the cache policy (a caller that bypasses the cache never receives a stored
/// answer) and the request's other settings (``Options``).
struct InflightKey: Hashable, Sendable {
    enum BodySource: Hashable, Sendable {
        case file(URL)
        case multipart(MultipartFormData)
    }

    let method: String
    let url: URL?
    let headers: [String: String]
    let body: Data?
    let bodySource: BodySource?
    let limits: Limits
    let stub: StubBehavior
    let cachePolicy: CachePolicy
    let options: Options
    /// The body's files as they are now (a file upload's, a multipart form's file parts): a
    /// caller whose file was rewritten since an exchange with the same path began never receives
    /// that exchange's answer, its own bytes unsent (found by review).
    let files: [FileStamp]

    /// A file's identity and version: device, inode, size and modification time (`nil` for a
    /// file that cannot be read now; the send will say why).
    struct FileStamp: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
        let size: Int64
        let modified: Int64
        let modifiedNanoseconds: Int64

        static func of(_ url: URL) -> FileStamp? {
            var info = stat()
            guard stat(url.path, &info) == 0 else { return nil }
            #if canImport(Darwin)
                let (seconds, nanoseconds) = (Int64(info.st_mtimespec.tv_sec), Int64(info.st_mtimespec.tv_nsec))
            #else
                let (seconds, nanoseconds) = (Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec))
            #endif
            return FileStamp(
                device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino),
                size: Int64(info.st_size), modified: seconds, modifiedNanoseconds: nanoseconds)
        }
    }

    /// The request's settings a transport obeys besides its bytes: a caller that forbids cellular
    /// access, waits longer for an answer, sends no cookies or asks Foundation's cache for
    /// another policy never shares another caller's exchange (it would get an answer made under
    /// the other's settings; found by review).
    struct Options: Hashable, Sendable {
        /// The bits of `timeoutInterval`: a NaN set by a mapping is equal to itself (a key unequal
        /// to itself was never found again, and its callers waited for ever; found by review).
        let timeoutInterval: UInt64
        let cachePolicy: UInt
        let handlesCookies: Bool
        let allowsCellularAccess: Bool
        let networkServiceType: UInt
        let mainDocumentURL: URL?
        #if canImport(Darwin)
            let allowsExpensiveNetworkAccess: Bool
            let allowsConstrainedNetworkAccess: Bool
        #endif

        init(_ request: URLRequest) {
            timeoutInterval = request.timeoutInterval.bitPattern
            cachePolicy = request.cachePolicy.rawValue
            handlesCookies = request.httpShouldHandleCookies
            allowsCellularAccess = request.allowsCellularAccess
            networkServiceType = request.networkServiceType.rawValue
            mainDocumentURL = request.mainDocumentURL
            #if canImport(Darwin)
                allowsExpensiveNetworkAccess = request.allowsExpensiveNetworkAccess
                allowsConstrainedNetworkAccess = request.allowsConstrainedNetworkAccess
            #endif
        }
    }

    /// `nil` for a request whose body cannot be compared (a body stream, a multipart form with a
    /// stream part): it is never merged.
    init?(_ request: URLRequest, task: HTTPTask, limits: Limits, stub: StubBehavior, cachePolicy: CachePolicy) {
        guard request.httpBodyStream == nil else { return nil }
        self.limits = limits
        self.stub = stub
        self.cachePolicy = cachePolicy
        options = Options(request)
        method = request.httpMethod ?? "GET"
        url = request.url
        headers = Self.withoutTraceContext(request.allHTTPHeaderFields ?? [:])
        body = request.httpBody
        switch task {
        case .uploadFile(let file, _):
            bodySource = .file(file)
            guard let stamp = FileStamp.of(file) else { return nil }
            files = [stamp]
        case .uploadMultipart(let form, _) where request.httpBody == nil:
            var files: [FileStamp] = []
            for part in form.parts {
                switch part.content {
                case .stream: return nil
                case .file(let url):
                    guard let stamp = FileStamp.of(url) else { return nil }
                    files.append(stamp)
                case .data: break
                }
            }
            bodySource = .multipart(form)
            self.files = files
        default:
            bodySource = nil
            files = []
        }
    }

    /// Trace context fields (W3C Trace Context and Baggage, B3, Jaeger, Google Cloud, AWS X-Ray),
    /// lowercased: a tracing plugin gives each call its own, and they are left out of the key,
    /// or no two traced calls would ever share an exchange (found by review). A caller that joins
    /// is answered by an exchange sent with the first caller's trace context.
    static let traceContextFields: Set<String> = [
        "traceparent", "tracestate", "baggage", "b3", "x-b3-traceid", "x-b3-spanid", "x-b3-parentspanid",
        "x-b3-sampled", "x-b3-flags", "uber-trace-id", "x-cloud-trace-context", "x-amzn-trace-id",
    ]

    static func withoutTraceContext(_ headers: [String: String]) -> [String: String] {
        guard headers.keys.contains(where: { traceContextFields.contains($0.lowercased()) }) else { return headers }
        return headers.filter { !traceContextFields.contains($0.key.lowercased()) }
    }

    /// The request's parts and the stub: the limits, the cache policy and the options are left to `==` (keys
    /// of the same request almost always share them), so the limits' sets of strings are not
    /// hashed at each of the table's lookups.
    func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(headers)
        hasher.combine(body)
        hasher.combine(bodySource)
        hasher.combine(files)
        hasher.combine(stub)
    }
}

/// One shared exchange and the callers waiting for it.
struct InflightEntry {
    let id: UInt64
    var waiters: [ObjectIdentifier: CheckedContinuation<Result<Response, CourierError>, Never>]
    /// Each waiter's own deadline (its timer entry), for those that have one.
    var deadlines: [ObjectIdentifier: UInt64] = [:]
    var task: Task<Void, Never>?
}

/// Identifies one waiting caller, so it can leave alone.
final class InflightWaiter: Sendable {
    /// Whether the caller joined an exchange already in flight rather than starting it: written on
    /// the provider actor, read by the caller after it was answered.
    let joined = Locked(false)
}

extension Provider {
    /// Waits for the shared exchange for `key`, starting it if this caller is the first. Each caller
    /// can cancel alone: it gets ``CourierError/cancelled`` at once and the others keep waiting; the
    /// last one to leave cancels the exchange. When `deadline` passes, the caller leaves the same
    /// way with ``CourierError/timedOut(_:)`` (a timer entry, no task of its own while it waits).
    nonisolated(nonsending) func shared(
        _ key: InflightKey, waiter: InflightWaiter, deadline: Duration?,
        exchange: @escaping @Sendable () async -> Result<Response, CourierError>
    ) async -> Result<Response, CourierError> {
        await withTaskCancellationHandler {
            await join(key, waiter: waiter, deadline: deadline, exchange: exchange)
        } onCancel: {
            Task { await self.leave(key, waiter: waiter) }
        }
    }

    /// Registers the caller, in one actor step, with the entry for `key` (made here if there is none).
    private func join(
        _ key: InflightKey, waiter: InflightWaiter, deadline: Duration?,
        exchange: @escaping @Sendable () async -> Result<Response, CourierError>
    ) async -> Result<Response, CourierError> {
        // This runs on the caller's task: a cancel that came before the join is seen here (the
        // flag is set before the cancellation handler runs), so the caller is never registered
        // after it left.
        if Task.isCancelled { return .failure(.cancelled) }
        return await withCheckedContinuation { continuation in
            let id = ObjectIdentifier(waiter)
            defer { inflightWaitersJoined?(inflightWaiterCount) }
            let timer = deadline.map { deadline in
                deadlines.schedule(after: deadline) {
                    Task { await self.leave(key, waiter: waiter, with: .timedOut(deadline)) }
                }
            }
            if inflight[key] != nil {
                inflight[key]?.waiters[id] = continuation
                inflight[key]?.deadlines[id] = timer
                waiter.joined.withLock { $0 = true }
                return
            }
            let entryID = nextInflightID
            nextInflightID &+= 1
            var entry = InflightEntry(id: entryID, waiters: [id: continuation])
            entry.deadlines[id] = timer
            entry.task = Task {
                // `exchange` is nonisolated: the work runs off the actor, which only records the end.
                let result = await exchange()
                self.complete(key, entryID: entryID, with: result)
            }
            inflight[key] = entry
        }
    }

    /// Answers every waiter and removes the entry, in one actor step.
    private func complete(_ key: InflightKey, entryID: UInt64, with result: Result<Response, CourierError>) {
        // The entry may be gone (everyone left) or replaced by a newer one with the same key.
        guard inflight[key]?.id == entryID, let entry = inflight.removeValue(forKey: key) else { return }
        for (waiter, continuation) in entry.waiters {
            if let timer = entry.deadlines[waiter] { deadlines.cancel(timer) }
            continuation.resume(returning: result)
        }
    }

    /// Answers a caller that was cancelled (or whose deadline passed) at once; cancels the
    /// exchange when it was the last one waiting. Does nothing for a caller that already left or
    /// was answered.
    func leave(_ key: InflightKey, waiter: InflightWaiter, with error: CourierError = .cancelled) {
        let id = ObjectIdentifier(waiter)
        // Changed in place: a copy of the entry would share its tables, and the first change
        // would copy them whole, once for each caller that leaves (quadratic when thousands of
        // waiters time out or are cancelled together; found by review).
        guard let continuation = inflight[key]?.waiters.removeValue(forKey: id) else { return }
        if let timer = inflight[key]?.deadlines.removeValue(forKey: id) { deadlines.cancel(timer) }
        continuation.resume(returning: .failure(error))
        if inflight[key]?.waiters.isEmpty == true, let entry = inflight.removeValue(forKey: key) {
            entry.task?.cancel()
        }
    }
}
