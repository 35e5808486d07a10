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
    public var request: URLRequest {
        didSet { destinationChecked = false }
    }
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
    public var limits: Limits {
        didSet { destinationChecked = false }
    }
    /// The time since the provider was made, on its clock: a transport reads it when the response
    /// head arrives, for ``TransferMetrics/responseStart``. `nil` when nobody measures.
    public var elapsed: (@Sendable () -> Duration)?
    /// Whether this is answered by a sample response (a stub): nothing goes on the wire, so the
    /// destination's scheme is not checked.
    var isSample = false
    /// Whether ``request``'s destination was checked against ``limits`` when the transfer was made:
    /// set by the provider, which checks the final request just before (issue 29: a transport's
    /// check of the first hop did the same work again, ≈ 1,000 instructions a request). Any change
    /// to ``request`` or ``limits`` clears it, so a hop that follows a redirect, or a request a
    /// transport or a plugin changed, is checked again.
    var destinationChecked = false
    /// Durable downloads (issue 27): set by the provider for a download it may resume. A transport
    /// calls it with each response head as it arrives, before the body, and then keeps the
    /// destination file of a transfer that fails, written up to the last byte that arrived (the
    /// provider resumes from it and removes it). `nil` (the default): nobody resumes, and a failed
    /// transfer's file is removed. A transport that ignores it is still correct: its downloads
    /// start over.
    public var downloadHeadArrived: (@Sendable (Response) -> Void)?

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

extension Transfer {
    /// Runs this transfer through `send`, which takes a whole request and returns a whole
    /// response: how a transport that does not stream implements ``Transport/send(_:)-(Transfer)``,
    /// and the path of stubs (Courier's sample responses and `CourierTesting`'s `StubTransport`).
    /// A file body is read into memory (off Swift's thread pool) and `send` receives it in
    /// `httpBody`; a file destination is written after the whole response arrived; progress is
    /// reported once each way; ``Response/transferMetrics`` is filled in. The scheme is checked
    /// before sending and the body size after receiving.
    /// - Parameter send: Sends the request (with its body) and returns the response.
    /// - Returns: The response; for a file destination, with ``Response/fileURL`` set and no data.
    public func sendBuffered(
        _ send: (URLRequest) async throws -> Response
    ) async throws -> Response {
        let request = try await bufferedRequest()
        let response = try await send(request)
        return try await completeBuffered(response, sent: Int64(request.httpBody?.count ?? 0))
    }

    /// Bodies up to this size are written to their download file on the caller's thread: a
    /// write of this much to a local file takes about as long as a hop to another thread.
    static let inlineWriteLimit = 64 << 10

    /// The start of ``sendBuffered(_:)``: the request with its destination checked and a file
    /// body read into `httpBody` (off Swift's thread pool).
    package func bufferedRequest() async throws -> URLRequest {
        var request = self.request
        if !isSample { try checkDestination() }
        if case .file(let url) = body {
            request.httpBody = try await BlockingIO.run { isCancelled in
                try FileBody.readAll(url, isCancelled: isCancelled)
            }
        }
        return request
    }

    /// The end of ``sendBuffered(_:)`` once the whole response is in memory: the size limit,
    /// progress (unless the caller reported it as the body arrived), and for a file destination
    /// the body written to the file.
    @inline(__always)  // Issue 29: no frame of its own on a stub's path (174 instructions a request)
    package nonisolated(nonsending) func completeBuffered(
        _ response: Response, sent length: Int64, reportingProgress: Bool = true
    ) async throws -> Response {
        let limit =
            if case .file = destination { limits.maxDownloadBytes } else {
                limits.maxResponseBytes
            }
        let received = Int64(response.data.count)
        if received > limit {
            throw CourierError.limitExceeded(
                destination == .memory ? .responseBody(limit: limit) : .downloadBody(limit: limit))
        }
        if reportingProgress {
            if length > 0 { progress?(.sent(bytes: length, total: length)) }
            progress?(.responseStarted(expectedLength: received))
            progress?(.received(bytes: received))
        }
        // In memory: returned as it came (the provider reads the sizes off the request and the
        // response), so a stub allocates nothing for its metrics.
        guard case .file(let url) = destination else { return response }
        let responseStart = elapsed?()
        var metrics = response.transferMetrics ?? TransferMetrics()
        metrics.bytesSent = max(metrics.bytesSent, length)
        metrics.bytesReceived = max(metrics.bytesReceived, received)
        metrics.responseStart = metrics.responseStart ?? responseStart
        // The one place a whole body in memory becomes a download, for every transport built on
        // `send(_:)` and for stubs. A large one is written on a thread of its own, never on Swift's
        // cooperative pool (up to `maxDownloadBytes`, a write of seconds on a slow disk).
        let data = response.data
        // Created readable by its owner only (`FileIO.privateFileMode`).
        if data.count <= Self.inlineWriteLimit {
            try FileIO.writePrivateFile(data, to: url)
        } else {
            try await BlockingIO.complete { _ in try FileIO.writePrivateFile(data, to: url) }
        }
        return response.withBody(Data(), fileURL: url, transferMetrics: metrics)
    }
}
