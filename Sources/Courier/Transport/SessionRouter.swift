import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session delegate: routes URLSession's callbacks by task identifier to the request waiting
/// for them, writes response bodies to their sink and reports progress.
///
/// URLSession calls a delegate synchronously on its own queue, so the routing table cannot live in
/// an actor; it sits behind ``Locked``, the one lock Courier has (see there).
final class SessionRouter: NSObject, URLSessionDataDelegate, Sendable {
    /// A response body being written to a file, in batches of ``batchSize``: URLSession hands
    /// chunks of ~16 KB to the delegate without backpressure, and writing each one on its own falls
    /// behind the network, queueing hundreds of MB of chunks (measured: 300 MB peak for 1 GiB,
    /// against ~60 MB with batches).
    ///
    /// Only touched inside the router's lock, from URLSession's delegate queue.
    final class FileSink {
        static let batchSize = 1 << 20

        let url: URL
        private let handle: FileHandle
        private var pending = Data()

        /// Creates (or truncates) the file and opens it for writing.
        init(url: URL) throws {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
            }
            self.url = url
            self.handle = try FileHandle(forWritingTo: url)
            pending.reserveCapacity(Self.batchSize)
        }

        func append(_ data: Data) throws {
            pending.append(data)
            if pending.count >= Self.batchSize { try flush() }
        }

        func flush() throws {
            guard !pending.isEmpty else { return }
            try handle.write(contentsOf: pending)
            pending.removeAll(keepingCapacity: true)
        }

        func close() { try? handle.close() }
    }

    private struct Entry {
        let request: URLRequest
        let continuation: CheckedContinuation<Response, any Error>
        /// The body, when it goes to memory.
        var data = Data()
        /// The body's file, when it goes to a file.
        let file: FileSink?
        let progress: (@Sendable (TransferProgress) -> Void)?
        var received: Int64 = 0
        /// A write to the file failed; the transfer fails with this.
        var writeError: (any Error)?
        /// An authentication challenge was refused; the 401 that caused it is the answer.
        var refusedChallenge = false
    }

    private let entries = Locked<[Int: Entry]>([:])
    /// The 401s behind refused challenges of completion-handler tasks (which have no entry).
    private let refusedChallenges = Locked<[Int: HTTPURLResponse]>([:])

    /// Called by a request's task once resumed, to make the hand-off of its result visible to
    /// ThreadSanitizer (see `ResumeOnce.synchronize`).
    func synchronize() {
        entries.withLock { _ in }
    }

    /// The response behind a refused challenge of this task, if there was one (taken once).
    func takeRefusedChallenge(_ taskIdentifier: Int) -> HTTPURLResponse? {
        refusedChallenges.withLock { $0.removeValue(forKey: taskIdentifier) }
    }

    func register(
        _ task: URLSessionTask, request: URLRequest, file: FileSink?,
        progress: (@Sendable (TransferProgress) -> Void)?,
        continuation: CheckedContinuation<Response, any Error>
    ) {
        entries.withLock {
            $0[task.taskIdentifier] = Entry(
                request: request, continuation: continuation, file: file, progress: progress)
        }
    }

    /// Ends a request now (one that never started, or one being cancelled): later callbacks for
    /// the task find no entry and are ignored.
    func fail(_ task: URLSessionTask, with error: any Error) {
        guard let entry = entries.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        entry.file?.close()
        entry.continuation.resume(throwing: error)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        let progress = entries.withLock { $0[task.taskIdentifier]?.progress }
        progress?(.sent(bytes: totalBytesSent, total: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let (progress, received): ((@Sendable (TransferProgress) -> Void)?, Int64) = entries.withLock { entries in
            guard entries[id]?.writeError == nil else { return (nil, 0) }
            if let file = entries[id]?.file {
                do { try file.append(data) } catch {
                    entries[id]?.writeError = error
                    // Never call into the session from its delegate queue (see InlineDelegateQueue).
                    DispatchQueue.global().async { dataTask.cancel() }
                }
            } else {
                entries[id]?.data.append(data)
            }
            entries[id]?.received += Int64(data.count)
            return (entries[id]?.progress, entries[id]?.received ?? 0)
        }
        guard let progress else { return }
        if received == Int64(data.count) {
            progress(.responseStarted(expectedLength: Self.expectedLength(of: dataTask.response)))
        }
        progress(.received(bytes: received))
    }

    /// The body length to expect: `Content-Length`, unless the body is content-encoded (then it
    /// describes the compressed bytes, not the decoded ones URLSession hands over).
    static func expectedLength(of response: URLResponse?) -> Int64? {
        guard let http = response as? HTTPURLResponse, http.expectedContentLength >= 0 else { return nil }
        if let encoding = http.value(forHTTPHeaderField: "Content-Encoding"),
            !encoding.isEmpty, encoding.lowercased() != "identity"
        {
            return nil
        }
        return http.expectedContentLength
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // 307/308 must repeat the body, which FoundationNetworking drops: refuse, and the transport
        // re-sends the request itself. Otherwise follow, without credentials if the origin changes.
        // Answered off the delegate queue, which is the session's own (see InlineDelegateQueue).
        let next: URLRequest? =
            Redirects.repeatsBody(response.statusCode)
            ? nil : Redirects.strippingCredentials(request, from: task.currentRequest?.url ?? response.url)
        DispatchQueue.global().async { completionHandler(next) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        switch challenge.protectionSpace.authenticationMethod {
        case NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodHTTPBasic,
            NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodNTLM,
            NSURLAuthenticationMethodNegotiate:
            // No credential to offer: refuse, so the 401 comes back instead of hanging on Linux
            // (where `.performDefaultHandling` waits forever).
            let hasEntry = entries.withLock { entries in
                entries[task.taskIdentifier]?.refusedChallenge = true
                return entries[task.taskIdentifier] != nil
            }
            if !hasEntry, let failure = (challenge.failureResponse ?? task.response) as? HTTPURLResponse {
                refusedChallenges.withLock { $0[task.taskIdentifier] = failure }
            }
            // Answered off the delegate queue, which is the session's own (see InlineDelegateQueue).
            DispatchQueue.global().async { completionHandler(.cancelAuthenticationChallenge, nil) }
        default:
            // Server trust and client certificates: the system's own evaluation.
            DispatchQueue.global().async { completionHandler(.performDefaultHandling, nil) }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = entries.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        let result = outcome(of: entry, task: task, error: error)
        // Released after the result is built, so the waiting task's `synchronize()` orders it.
        entries.withLock { _ in }
        entry.continuation.resume(with: result)
    }

    private func outcome(of entry: Entry, task: URLSessionTask, error: (any Error)?) -> Result<Response, any Error> {
        var writeError = entry.writeError
        if let file = entry.file {
            if writeError == nil, error == nil {
                do { try file.flush() } catch { writeError = error }
            }
            file.close()
        }
        if let writeError { return .failure(writeError) }
        let httpResponse = task.response as? HTTPURLResponse
        if let error, !(entry.refusedChallenge && httpResponse != nil) {
            return .failure(URLErrors.normalize(error))
        }
        guard let httpResponse else { return .failure(URLError(.badServerResponse)) }
        return .success(
            Response(
                statusCode: httpResponse.statusCode, data: entry.data, request: entry.request,
                response: httpResponse, fileURL: entry.file?.url))
    }
}
