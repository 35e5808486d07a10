import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends a prepared `URLRequest` and returns the response.
///
/// The default is ``URLSessionTransport``. Write your own to put Courier on another HTTP client.
/// A transport must:
/// - return HTTP error statuses as responses (validation is the provider's job);
/// - stop promptly when the calling Swift task is cancelled, throwing any error (the provider
///   reports cancellation as ``CourierError/cancelled``);
/// - be safe to call concurrently.
///
/// Only ``send(_:)-(URLRequest)`` is required. Uploads from files, downloads to files and progress
/// go through ``send(_:)-(Transfer)``, whose default builds on the first (buffering in memory);
/// override it to stream.
public protocol Transport: Sendable {
    /// Sends `request` and waits for the whole response.
    /// - Parameter request: The final request, after plugins' `prepare`.
    /// - Returns: The response, with `request` set to the request that was sent.
    /// - Throws: Any error; the provider wraps it in ``CourierError/underlying(_:_:)`` unless it
    ///   already is a ``CourierError``.
    func send(_ request: URLRequest) async throws -> Response

    /// Runs a transfer: a request whose body may come from a file, whose response body may go to
    /// a file, with progress reports.
    /// - Parameter transfer: The request, body source, destination and progress callback.
    /// - Returns: The response; for a file destination, ``Response/fileURL`` is set and
    ///   ``Response/data`` is empty.
    /// - Throws: Any error, as for ``send(_:)-(URLRequest)``.
    func send(_ transfer: Transfer) async throws -> Response

    /// Runs a transfer and returns as soon as the response head arrives; the body follows as it
    /// arrives (``Provider/stream(_:idleTimeout:totalTimeout:)``). The default sends the transfer with
    /// ``send(_:)-(Transfer)`` and hands the whole body over as one chunk; override it to stream.
    /// - Parameter transfer: The request and its body source (the destination is ignored).
    /// - Returns: The head and the body. Stop the transfer when the body's reader goes
    ///   (``ResponseBody/Writer/onTermination(_:)``).
    /// - Throws: Any error before the head arrives, as for ``send(_:)-(URLRequest)``.
    func stream(_ transfer: Transfer) async throws -> StreamedResponse
}

extension Transport {
    public func stream(_ transfer: Transfer) async throws -> StreamedResponse {
        try await streamBuffered(transfer)
    }

    /// The default ``stream(_:)``: the whole response through ``send(_:)-(Transfer)``, its body
    /// handed over as one chunk.
    package func streamBuffered(_ transfer: Transfer) async throws -> StreamedResponse {
        var transfer = transfer
        transfer.destination = .memory
        let response = try await send(transfer)
        let head = Response(
            statusCode: response.statusCode, data: Data(), request: response.request, response: response.response,
            transferMetrics: response.transferMetrics)
        return StreamedResponse(head: head, body: ResponseBody(response.data))
    }
}
