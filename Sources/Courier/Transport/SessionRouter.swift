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
    /// Where a response body goes.
    enum Sink {
        case memory(Data)
        case file(FileHandle, URL)

        /// Creates (or truncates) the file and opens it for writing.
        static func file(at url: URL) throws -> Sink {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
            }
            return .file(try FileHandle(forWritingTo: url), url)
        }
    }

    private struct Entry {
        let request: URLRequest
        let continuation: CheckedContinuation<Response, any Error>
        var sink: Sink
        let progress: (@Sendable (TransferProgress) -> Void)?
        var received: Int64 = 0
        /// A write to the sink failed; the transfer fails with this.
        var writeError: (any Error)?
        /// An authentication challenge was refused; the 401 that caused it is the answer.
        var refusedChallenge = false
    }

    private let entries = Locked<[Int: Entry]>([:])

    func register(
        _ task: URLSessionTask, request: URLRequest, sink: Sink,
        progress: (@Sendable (TransferProgress) -> Void)?,
        continuation: CheckedContinuation<Response, any Error>
    ) {
        entries.withLock {
            $0[task.taskIdentifier] = Entry(
                request: request, continuation: continuation, sink: sink, progress: progress)
        }
    }

    /// Ends a request that never started.
    func fail(_ task: URLSessionTask, with error: any Error) {
        guard let entry = entries.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if case .file(let handle, _) = entry.sink { try? handle.close() }
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
        let (progress, started, received): ((@Sendable (TransferProgress) -> Void)?, Bool, Int64) =
            entries.withLock { entries in
                guard var entry = entries[id], entry.writeError == nil else { return (nil, false, 0) }
                // Drop the entry's copy while appending so the buffer is uniquely referenced.
                entries[id] = nil
                let started = entry.received == 0
                switch entry.sink {
                case .memory(var buffer):
                    entry.sink = .memory(Data())
                    buffer.append(data)
                    entry.sink = .memory(buffer)
                case .file(let handle, _):
                    do { try handle.write(contentsOf: data) } catch {
                        entry.writeError = error
                        dataTask.cancel()
                    }
                }
                entry.received += Int64(data.count)
                entries[id] = entry
                return (entry.progress, started, entry.received)
            }
        guard let progress else { return }
        if started {
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
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        switch challenge.protectionSpace.authenticationMethod {
        case NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodHTTPBasic,
            NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodNTLM,
            NSURLAuthenticationMethodNegotiate:
            // No credential to offer: refuse, so the 401 comes back instead of hanging on Linux
            // (where `.performDefaultHandling` waits forever).
            entries.withLock { $0[task.taskIdentifier]?.refusedChallenge = true }
            completionHandler(.cancelAuthenticationChallenge, nil)
        default:
            // Server trust and client certificates: the system's own evaluation.
            completionHandler(.performDefaultHandling, nil)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = entries.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        var fileURL: URL?
        var data = Data()
        switch entry.sink {
        case .memory(let buffer):
            data = buffer
        case .file(let handle, let url):
            try? handle.close()
            fileURL = url
        }
        if let writeError = entry.writeError {
            entry.continuation.resume(throwing: writeError)
            return
        }
        let httpResponse = task.response as? HTTPURLResponse
        if let error, !(entry.refusedChallenge && httpResponse != nil) {
            entry.continuation.resume(throwing: URLErrors.normalize(error))
            return
        }
        guard let httpResponse else {
            entry.continuation.resume(throwing: URLError(.badServerResponse))
            return
        }
        entry.continuation.resume(
            returning: Response(
                statusCode: httpResponse.statusCode, data: data, request: entry.request,
                response: httpResponse, fileURL: fileURL))
    }
}
