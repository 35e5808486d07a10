import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Everything a transport needs for one exchange beyond the `URLRequest`: where the body comes
/// from, where the response body goes, and whom to tell about progress.
public struct Transfer: Sendable {
    /// Where the request body comes from.
    public enum Body: Sendable, Hashable {
        /// `request.httpBody` (or no body).
        case inRequest
        /// This file, streamed. It must be a regular file that keeps its size while it is sent.
        case file(URL)

        var fileURL: URL? {
            if case .file(let url) = self { return url }
            return nil
        }
    }

    /// Where the response body goes.
    public enum Destination: Sendable, Hashable {
        /// Into ``Response/data``.
        case memory
        /// Into this file (which the transport creates), streamed; ``Response/data`` stays empty
        /// and ``Response/fileURL`` is set.
        case file(URL)
    }

    /// The request.
    public var request: URLRequest
    /// Where the body comes from. Default: ``Body/inRequest``.
    public var body: Body
    /// Where the response body goes. Default: ``Destination/memory``.
    public var destination: Destination
    /// Called with cumulative counts as bytes move, in order. Default: `nil`.
    public var progress: (@Sendable (TransferProgress) -> Void)?
    /// The target the request was made for (the one a ``MultiTarget`` wraps), when the provider
    /// sent it: for transports that report or route by target. Default: `nil`.
    public var target: (any TargetType)?
    /// The limits the transport enforces while sending and receiving: body sizes (counted after
    /// decompression, while the body arrives), decompression ratio, redirects and allowed schemes.
    /// Default: ``Limits/default``.
    public var limits: Limits

    /// Creates a transfer.
    public init(
        request: URLRequest, body: Body = .inRequest, destination: Destination = .memory,
        progress: (@Sendable (TransferProgress) -> Void)? = nil, target: (any TargetType)? = nil,
        limits: Limits = .default
    ) {
        self.request = request
        self.body = body
        self.destination = destination
        self.progress = progress
        self.target = target
        self.limits = limits
    }
}

extension Transport {
    /// Runs a transfer with ``send(_:)-(URLRequest)``: a file body is read into memory (off
    /// Swift's thread pool), a file destination is written after the whole response arrived, and
    /// progress is reported once each way at the end. The scheme is checked before sending and the
    /// body size after receiving, since this path cannot stop a body while it arrives.
    /// Transports that can stream override this.
    public func send(_ transfer: Transfer) async throws -> Response {
        var request = transfer.request
        try RequestValidation.validateDestination(request.url, limits: transfer.limits)
        if case .file(let url) = transfer.body {
            request.httpBody = try await BlockingIO.run { isCancelled in
                try FileBody.readAll(url, isCancelled: isCancelled)
            }
        }
        let length = Int64(request.httpBody?.count ?? 0)
        let response = try await send(request)
        let limit =
            if case .file = transfer.destination { transfer.limits.maxDownloadBytes } else {
                transfer.limits.maxResponseBytes
            }
        if Int64(response.data.count) > limit {
            throw CourierError.limitExceeded(
                transfer.destination == .memory ? .responseBody(limit: limit) : .downloadBody(limit: limit))
        }
        if length > 0 { transfer.progress?(.sent(bytes: length, total: length)) }
        transfer.progress?(.responseStarted(expectedLength: Int64(response.data.count)))
        transfer.progress?(.received(bytes: Int64(response.data.count)))
        guard case .file(let url) = transfer.destination else { return response }
        try response.data.write(to: url)
        return Response(
            statusCode: response.statusCode, data: Data(), request: response.request,
            response: response.response, fileURL: url)
    }
}
