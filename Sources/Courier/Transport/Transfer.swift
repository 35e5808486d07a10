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
        /// This file, streamed.
        case file(URL)
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

    /// Creates a transfer.
    public init(
        request: URLRequest, body: Body = .inRequest, destination: Destination = .memory,
        progress: (@Sendable (TransferProgress) -> Void)? = nil, target: (any TargetType)? = nil
    ) {
        self.request = request
        self.body = body
        self.destination = destination
        self.progress = progress
        self.target = target
    }
}

extension Transport {
    /// Runs a transfer with ``send(_:)-(URLRequest)``: a file body is read into memory, a file
    /// destination is written after the whole response arrived, and progress is reported once
    /// each way at the end. Transports that can stream override this.
    public func send(_ transfer: Transfer) async throws -> Response {
        var request = transfer.request
        if case .file(let url) = transfer.body {
            request.httpBody = try Data(contentsOf: url)
        }
        let length = Int64(request.httpBody?.count ?? 0)
        let response = try await send(request)
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
