import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Runs one exchange for the provider: sends a prepared request and returns the response.
///
/// The default is ``URLSessionTransport``; `CourierAsyncHTTPClient` ships another. Write your own
/// to put Courier on another HTTP client, or to answer from somewhere else.
///
/// ## The requirement
///
/// ``send(_:)-(Transfer)`` is the one method a transport must implement. ``stream(_:)`` has a
/// default that buffers (override it to hand the body over as it arrives), and
/// ``send(_:)-(URLRequest)`` is a convenience built on ``send(_:)-(Transfer)``. A transport that
/// has only "send this `URLRequest`, get a whole response" implements the requirement with
/// ``Transfer/sendBuffered(_:)``, which does everything below for it except following redirects:
///
/// ```swift
/// struct MyTransport: Transport {
///     func send(_ transfer: Transfer) async throws -> Response {
///         try await transfer.sendBuffered { request in try await myClient.fetch(request) }
///     }
/// }
/// ```
///
/// A transport that adds something to every exchange wraps another and implements the same two
/// methods; nothing else is needed, and nothing can call itself in a loop:
///
/// ```swift
/// struct Tagging: Transport {
///     let inner: any Transport
///     func send(_ transfer: Transfer) async throws -> Response {
///         try await inner.send(tagged(transfer))
///     }
///     func stream(_ transfer: Transfer) async throws -> StreamedResponse {
///         try await inner.stream(tagged(transfer))
///     }
///     private func tagged(_ transfer: Transfer) -> Transfer {
///         var transfer = transfer
///         transfer.request.setValue("docs", forHTTPHeaderField: "X-Tag")
///         return transfer
///     }
/// }
/// ```
///
/// ## One exchange, in order
///
/// 1. **Check** the destination before anything goes out, on every hop:
///    ``Transfer/checkDestination()`` (allowed schemes, a host). For a file body,
///    ``Transfer/fileBodySize()`` says how many bytes to send.
/// 2. **Send** the request and its body (``Transfer/body``), reporting
///    ``TransferProgress/sent(bytes:total:)`` as bytes go.
/// 3. **Redirects**: a transport that follows them does so through
///    ``Transfer/following(redirect:redirects:)``, the one place Courier's rules live (statuses,
///    method and body rewriting, allowed schemes, `https` → `http` refusal, credentials dropped
///    across origins, ``Limits/maxRedirects``). Nothing else in the transport decides about a
///    redirect; the client underneath must not follow them itself. A followed redirect's body is
///    not the answer's: it is held to none of the limits and kept nowhere (read a little, for the
///    connection's sake, then dropped).
/// 4. **Head**: when the final response head arrives, read ``Transfer/elapsed`` for
///    ``TransferMetrics/responseStart`` and report
///    ``TransferProgress/responseStarted(expectedLength:)`` with
///    ``ResponseBodyLimit/expectedLength(of:method:)``, before any of the body (an empty body
///    too). A redirect that is followed reports neither its head nor its body.
/// 5. **Body**: into memory or into the destination file (``Transfer/destination``), counted
///    against ``Transfer/limits`` as it arrives (after decompression), reporting
///    ``TransferProgress/received(bytes:)``. A file left by a failed or cancelled transfer is
///    removed, unless ``Transfer/downloadHeadArrived`` is set (a download the provider may
///    resume): then each head is reported to it, and the file keeps every byte that arrived.
/// 6. **Answer**: return HTTP error statuses as responses (validation is the provider's job),
///    with ``Response/transferMetrics`` (bytes, redirects followed, response start). A value the
///    transport does not know stays `nil`: the provider never reads a guess as a measurement.
///    ``Response/request`` is the request of the last hop, the one that drew this answer, not the
///    first: the provider reads it to tell whether an answer came from where a credential was
///    sent (a `401` from the origin a redirect led to starts no refresh of the first's token).
///
/// ## Rules
///
/// - **Cancellation**: stop promptly when the calling Swift task is cancelled, throwing any error
///   (the provider reports it as ``CourierError/cancelled``).
/// - **Concurrency**: be safe to call concurrently; keep no state between exchanges that a test
///   could see.
/// - **Errors**: throw anything; the provider wraps what is not a ``CourierError`` in
///   ``CourierError/underlying(_:_:)``.
///
/// `CourierTransportConformance` checks all of this against a running server; run it on a
/// transport of your own.
public protocol Transport: Sendable {
    /// Runs a transfer: a request whose body may come from a file, whose response body may go to
    /// a file, with progress reports (see the lifecycle above).
    /// - Parameter transfer: The request (after plugins' `prepare`), body source, destination,
    ///   progress callback and limits.
    /// - Returns: The response, with `request` set to the request that was sent last; for a file
    ///   destination, ``Response/fileURL`` is set and ``Response/data`` is empty.
    /// - Throws: Any error; the provider wraps it in ``CourierError/underlying(_:_:)`` unless it
    ///   already is a ``CourierError``.
    func send(_ transfer: Transfer) async throws -> Response

    /// Runs a transfer and returns as soon as the response head arrives; the body follows as it
    /// arrives (``Provider/stream(_:idleTimeout:totalTimeout:)``). The default sends the transfer with
    /// ``send(_:)-(Transfer)`` and hands the whole body over as one chunk; override it to stream.
    /// - Parameter transfer: The request and its body source (the destination is ignored).
    /// - Returns: The head and the body. Stop the transfer when the body's reader goes
    ///   (``ResponseBody/Writer/onTermination(_:)``).
    /// - Throws: Any error before the head arrives, as for ``send(_:)-(Transfer)``.
    func stream(_ transfer: Transfer) async throws -> StreamedResponse
}

extension Transport {
    /// Sends `request` with its body in memory and waits for the whole response: a convenience
    /// for ``send(_:)-(Transfer)`` with ``Transfer/init(request:body:destination:progress:target:limits:)``'s
    /// defaults.
    /// - Parameter request: The request to send.
    /// - Returns: The response.
    /// - Throws: What ``send(_:)-(Transfer)`` throws.
    public func send(_ request: URLRequest) async throws -> Response {
        try await send(Transfer(request: request))
    }

    public func stream(_ transfer: Transfer) async throws -> StreamedResponse {
        try await streamBuffered(transfer)
    }

    /// The default ``stream(_:)``: the whole response through ``send(_:)-(Transfer)``, its body
    /// handed over as one chunk.
    package func streamBuffered(_ transfer: Transfer) async throws -> StreamedResponse {
        var transfer = transfer
        transfer.destination = .memory
        return StreamedResponse(buffered: try await send(transfer))
    }
}

extension StreamedResponse {
    /// A whole response handed over as a stream: its head, then its body as one chunk.
    init(buffered response: Response) {
        let head = Response(
            statusCode: response.statusCode, data: Data(), request: response.request, response: response.response,
            transferMetrics: response.transferMetrics)
        self.init(head: head, body: ResponseBody(response.data))
    }
}
