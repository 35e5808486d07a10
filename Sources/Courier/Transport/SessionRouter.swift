import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session delegate: routes URLSession's callbacks by task identifier to the request waiting
/// for them.
///
/// URLSession calls a delegate synchronously on its own queue, so the routing table cannot live in
/// an actor; it sits behind ``Locked``, the one lock Courier has (see there).
final class SessionRouter: NSObject, URLSessionDataDelegate, Sendable {
    private struct Entry {
        let request: URLRequest
        let continuation: CheckedContinuation<Response, any Error>
        var data = Data()
        /// An authentication challenge was refused; the 401 that caused it is the answer.
        var refusedChallenge = false
    }

    private let entries = Locked<[Int: Entry]>([:])

    func register(
        _ task: URLSessionTask, request: URLRequest, continuation: CheckedContinuation<Response, any Error>
    ) {
        entries.withLock { $0[task.taskIdentifier] = Entry(request: request, continuation: continuation) }
    }

    /// Ends a request that never started.
    func fail(_ task: URLSessionTask, with error: any Error) {
        let entry = entries.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        entry?.continuation.resume(throwing: error)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        entries.withLock { $0[dataTask.taskIdentifier]?.data.append(data) }
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
                statusCode: httpResponse.statusCode, data: entry.data, request: entry.request,
                response: httpResponse))
    }
}
