/// One step of a transfer, from ``Provider/requestWithProgress(_:)``.
///
/// Events arrive while the body is sent (``upload``) and while the response is received
/// (``download``). ``fraction`` follows the transfer's main direction: the upload when the request
/// has a body, otherwise the download. It never goes backwards within an attempt (a request
/// retried, or sent again after a credential refresh, counts again from 0) and is `nil` while the total is
/// unknown (a chunked response, or a compressed one whose `Content-Length` is the compressed size),
/// and while an answer without a body (a download of 0 bytes) waits for the completed event: another
/// answer may follow it (a status retried, a refreshed credential) and move the fraction from 0.
/// The last event is the only one with ``isCompleted`` set; it carries the ``response`` and a
/// fraction of 1.
public struct ProgressEvent: Sendable, Hashable {
    /// Bytes moved in one direction.
    public struct Bytes: Sendable, Hashable {
        /// Bytes done so far.
        public var completed: Int64
        /// All the bytes there will be, when known.
        public var total: Int64?

        /// Creates a count.
        public init(completed: Int64, total: Int64?) {
            self.completed = completed
            self.total = total
        }

        /// `completed / total`, or `nil` when the total is unknown.
        public var fraction: Double? {
            guard let total else { return nil }
            guard total > 0 else { return 1 }
            return min(1, Double(completed) / Double(total))
        }
    }

    /// The request body sent so far; `nil` when the request has no body.
    public var upload: Bytes?
    /// The response body received so far; `nil` until the response starts.
    public var download: Bytes?
    /// Overall progress from 0 to 1, never decreasing; `nil` while indeterminate.
    public var fraction: Double?
    /// The response, on the last event only.
    public var response: Response?

    /// Whether this is the last event (it carries the response).
    public var isCompleted: Bool { response != nil }
    /// Whether the total is unknown, so there is no fraction to show.
    public var isIndeterminate: Bool { fraction == nil }

    /// Creates an event.
    public init(upload: Bytes?, download: Bytes?, fraction: Double?, response: Response? = nil) {
        self.upload = upload
        self.download = download
        self.fraction = fraction
        self.response = response
    }

    public static func == (lhs: ProgressEvent, rhs: ProgressEvent) -> Bool {
        lhs.upload == rhs.upload && lhs.download == rhs.download && lhs.fraction == rhs.fraction
            && lhs.isCompleted == rhs.isCompleted
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(upload)
        hasher.combine(download)
        hasher.combine(fraction)
        hasher.combine(isCompleted)
    }
}

/// What a transport reports while it moves bytes. Counts are cumulative.
public enum TransferProgress: Sendable, Hashable {
    /// `bytes` of the request body sent, of `total` when known.
    case sent(bytes: Int64, total: Int64?)
    /// The answer's head arrived (a redirect's head is not reported, nor its body); the body will
    /// be `expectedLength` bytes when known: `nil` for a chunked or content-encoded body, 0 for an
    /// answer that has none (see ``ResponseBodyLimit/expectedLength(of:method:)``). Reported
    /// before any of the body, and for an empty body too.
    case responseStarted(expectedLength: Int64?)
    /// `bytes` of the response body received.
    case received(bytes: Int64)
}
