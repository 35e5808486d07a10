import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The limits on one response body while it arrives, for transports: its size
/// (``Limits/maxResponseBytes`` in memory, ``Limits/maxDownloadBytes`` to a file, none for a
/// stream) and, once the body passes 1 MiB (below which every body is allowed whatever its
/// compression), the decompression ratio (``Limits/maxDecompressionRatio``).
///
/// A transport makes one per response and calls ``crossed(by:head:)`` with the decoded bytes
/// received so far after every chunk (and, if it decodes bodies itself,
/// ``crossed(onTheWire:decoded:)`` with the encoded ones); a limit crossed ends the transfer with
/// ``CourierError/limitExceeded(_:)``. ``URLSessionTransport`` and `AsyncHTTPClientTransport` both
/// enforce their limits through it, so they refuse the same responses.
public struct ResponseBodyLimit: Sendable {
    /// Bodies up to this size pass the ratio check whatever their compression.
    static let ratioFloor: Int64 = 1 << 20

    /// The most bytes (decoded) the body may have.
    public let maximum: Int64
    /// The limit reported when ``maximum`` is crossed.
    public let failure: LimitExceeded
    let ratio: Int64
    /// For a compressed body of known size: the decoded bytes allowed. Looked up once the body
    /// passes ``ratioFloor``, so small responses never pay for the header lookup.
    private var ratioMaximum: Int64??

    /// The limit for the body of `transfer`'s response: kept in memory or written to its file.
    public init(for transfer: Transfer) {
        if case .file = transfer.destination {
            self.init(toFile: true, limits: transfer.limits)
        } else {
            self.init(toFile: false, limits: transfer.limits)
        }
    }

    init(toFile: Bool, limits: Limits) {
        maximum = toFile ? limits.maxDownloadBytes : limits.maxResponseBytes
        failure = toFile ? .downloadBody(limit: maximum) : .responseBody(limit: maximum)
        ratio = limits.maxDecompressionRatio
    }

    /// A streamed body: no total (its backlog is bounded instead), the ratio as for any body.
    public init(streaming limits: Limits) {
        maximum = .max
        failure = .responseBody(limit: .max)
        ratio = limits.maxDecompressionRatio
    }

    /// The limit a body announced by `head` (`Content-Length`) would cross, so it fails before it
    /// is read. For a compressed body the announced size is the compressed one, which the decoded
    /// body does not undercut. `nil` for an answer that has no body (``hasNoBody(status:method:)``,
    /// the method read off `head`'s request), whatever its `Content-Length` says: a `HEAD` for the
    /// size of a 1 GiB file announces 1 GiB and sends nothing.
    public func announcedCrossing(_ head: Response) -> LimitExceeded? {
        if Self.hasNoBody(status: head.statusCode, method: head.request?.httpMethod) { return nil }
        return announcedCrossing(contentLength: head.expectedContentLength)
    }

    /// The limit a body of `contentLength` announced bytes (-1: not announced) would cross.
    func announcedCrossing(contentLength: Int64) -> LimitExceeded? {
        contentLength > maximum ? failure : nil
    }

    /// The `Content-Length` header's value, or -1 when absent or not a number. Read from the header
    /// rather than `expectedContentLength`, which Apple's URLSession may report as -1 for a
    /// compressed body (it describes what it hands over, not what the server sent).
    static func contentLength(of response: URLResponse?) -> Int64 {
        guard let http = response as? HTTPURLResponse,
            let value = http.value(forHTTPHeaderField: "Content-Length"),
            let length = HeaderNumber.length(value)
        else { return -1 }
        return length
    }

    /// The body length a transport announces in progress (``TransferProgress``'s expected length):
    /// `Content-Length`, unless the body is content-encoded (a `Content-Encoding` that names a
    /// coding other than `identity`: ``ContentCoding/list(_:)`` is not empty), when that length counts the encoded bytes, not the decoded ones handed over.
    /// ``URLSessionTransport`` and `AsyncHTTPClientTransport` both announce it through this.
    /// - Parameters:
    ///   - contentLength: The `Content-Length` header's value, or a negative number when absent.
    ///   - contentEncoding: The `Content-Encoding` header's value, if any.
    public static func expectedLength(contentLength: Int64, contentEncoding: String?) -> Int64? {
        contentLength >= 0 && !ContentCoding.isEncoded(contentEncoding) ? contentLength : nil
    }

    /// The body length to announce when the response head arrives, in
    /// ``TransferProgress/responseStarted(expectedLength:)``: 0 for an answer that has no body
    /// whatever its head says (``hasNoBody(status:method:)``), otherwise
    /// ``expectedLength(contentLength:contentEncoding:)``.
    /// ``URLSessionTransport`` and `AsyncHTTPClientTransport` both announce it through this.
    /// - Parameters:
    ///   - head: The final response head (not a redirect that is followed).
    ///   - method: The method of the request it answers.
    public static func expectedLength(of head: Response, method: String?) -> Int64? {
        expectedLength(status: head.statusCode, method: method) {
            (head.expectedContentLength, head.value(forHTTPHeaderField: "Content-Encoding"))
        }
    }

    /// The rule of ``expectedLength(of:method:)`` for a head of any kind; its `Content-Length`
    /// and `Content-Encoding` are read only for an answer that can have a body.
    static func expectedLength(
        status: Int, method: String?, fields: () -> (length: Int64, encoding: String?)
    ) -> Int64? {
        if hasNoBody(status: status, method: method) { return 0 }
        let (length, encoding) = fields()
        return expectedLength(contentLength: length, contentEncoding: encoding)
    }

    /// Whether an answer has no body, whatever its `Content-Length` and `Content-Encoding` say:
    /// one to `HEAD`, a 1xx, a 204 or a 304 (RFC 9110 §6.4.1, §9.3.2).
    public static func hasNoBody(status: Int, method: String?) -> Bool {
        if status < 200 || status == 204 || status == 304 { return true }
        // Without a copy of the method for the usual ones (this runs for every answer).
        guard let method, method.utf8.count == 4 else { return false }
        return method == "HEAD" || method.uppercased() == "HEAD"
    }

    /// The limit crossed by a body of `received` decoded bytes so far, if any.
    /// - Parameters:
    ///   - received: The decoded bytes received so far.
    ///   - head: The response head (its `Content-Length` and `Content-Encoding`).
    public mutating func crossed(by received: Int64, head: Response) -> LimitExceeded? {
        crossed(by: received) {
            (head.expectedContentLength, head.value(forHTTPHeaderField: "Content-Encoding"))
        }
    }

    mutating func crossed(by received: Int64, response: URLResponse?) -> LimitExceeded? {
        crossed(by: received) {
            let http = response as? HTTPURLResponse
            return (Self.contentLength(of: response), http?.value(forHTTPHeaderField: "Content-Encoding"))
        }
    }

    /// The limit crossed by a content-encoded body of `wireBytes` bytes as they came off the wire
    /// (before decoding), which have decoded to `decoded` bytes so far, if any, for a transport
    /// that decodes bodies itself.
    ///
    /// ``crossed(by:head:)`` holds the decoded bytes. A body that decodes to little or nothing
    /// (empty deflate blocks, sent without end) passes it, and the ratio check, forever; this
    /// holds the wire bytes in excess of the decoded ones (`wireBytes - decoded`) to ``maximum``
    /// as well, with 1/1024 of it and 1 KiB over it allowed. What an encoder adds to a body within
    /// the limit (an empty block at every flush, a header and trailer per gzip member, bytes it
    /// cannot shrink) is allowed up to that much, so such a body passes, and no body within the
    /// limit takes more than about twice the limit on the wire. Not for a stream, whose
    /// ``maximum`` is none.
    /// - Parameters:
    ///   - wireBytes: The encoded bytes received so far.
    ///   - decoded: The bytes they decoded to.
    public func crossed(onTheWire wireBytes: Int64, decoded: Int64) -> LimitExceeded? {
        let (allowed, overflow) = maximum.addingReportingOverflow(maximum / 1_024 + 1_024)
        return !overflow && wireBytes - max(0, min(decoded, wireBytes)) > allowed ? failure : nil
    }

    /// `head` is read once, when the body first passes ``ratioFloor``.
    private mutating func crossed(by received: Int64, head: () -> (length: Int64, encoding: String?)) -> LimitExceeded?
    {
        if received > maximum { return failure }
        guard received > Self.ratioFloor else { return nil }
        if ratioMaximum == nil {
            let (length, encoding) = head()
            ratioMaximum = .some(Self.ratioMaximum(length: length, encoding: encoding, ratio: ratio))
        }
        if let allowed = ratioMaximum ?? nil, received > allowed { return .decompressionRatio(limit: ratio) }
        return nil
    }

    private static func ratioMaximum(length: Int64, encoding: String?, ratio: Int64) -> Int64? {
        guard length >= 0, ContentCoding.isEncoded(encoding) else { return nil }
        let (product, overflow) = length.multipliedReportingOverflow(by: max(1, ratio))
        return max(overflow ? Int64.max : product, ratioFloor)
    }
}
