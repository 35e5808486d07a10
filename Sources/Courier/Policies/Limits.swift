import Foundation

/// Bounds on what a request may send and what a server may make Courier hold, with safe defaults.
///
/// ```swift
/// let provider = Provider<API>(limits: Limits(maxResponseBytes: 256 << 20))
/// // One target that downloads large files:
/// var limits: Limits? { Limits(maxDownloadBytes: 64 << 30) }
/// ```
///
/// Every limit is enforced while the response arrives, so memory and disk use stay bounded by the
/// limit, not by what the server sends. Crossing one fails the request with
/// ``CourierError/limitExceeded(_:)``, or ``CourierError/schemeNotAllowed(_:)`` for a scheme.
/// The provider's limits apply unless a target sets its own (``TargetType/limits``).
public struct Limits: Sendable, Hashable {
    /// The default for ``maxResponseBytes``: 64 MiB.
    public static let defaultMaxResponseBytes: Int64 = 64 << 20
    /// The default for ``maxDownloadBytes``: 16 GiB.
    public static let defaultMaxDownloadBytes: Int64 = 16 << 30
    /// The default for ``maxDecompressionRatio``: 200.
    public static let defaultMaxDecompressionRatio: Int64 = 200
    /// The default for ``maxRedirects``: 20 (FoundationNetworking's own limit).
    public static let defaultMaxRedirects = 20
    /// The default for ``allowedSchemes``: `http` and `https`.
    public static let defaultAllowedSchemes: Set<String> = ["http", "https"]
    /// The default for ``maxLineBytes``: 1 MiB.
    public static let defaultMaxLineBytes: Int64 = 1 << 20
    /// The default for ``maxStreamBacklogBytes``: 2 GiB.
    public static let defaultMaxStreamBacklogBytes: Int64 = 2 << 30
    /// The default for ``maxErrorBodyBytes``: 1 MiB.
    public static let defaultMaxErrorBodyBytes: Int64 = 1 << 20
    /// The default for ``credentialHeaders``: the request headers among
    /// ``RedactionPolicy/defaultHeaders`` — `Authorization`, `Proxy-Authorization`, `Cookie`,
    /// `X-API-Key`, `Api-Key`, `X-Auth-Token`, `X-Access-Token`, `X-Refresh-Token`,
    /// `X-Session-Token`, `X-CSRF-Token`, `X-XSRF-Token`, `X-Amz-Security-Token`, `X-Goog-Api-Key`,
    /// `Private-Token`, `Job-Token`, `X-Gitlab-Token`, `X-Vault-Token`, `Ocp-Apim-Subscription-Key`,
    /// `X-Shopify-Access-Token`, `X-Auth-Key`, `X-Api-Token`, `DD-API-KEY`, `DD-APPLICATION-KEY` and
    /// `X-Algolia-API-Key`.
    public static let defaultCredentialHeaders: Set<String> = [
        "Authorization", "Proxy-Authorization", "Cookie", "X-API-Key", "Api-Key", "X-Auth-Token", "X-Access-Token",
        "X-Refresh-Token", "X-Session-Token", "X-CSRF-Token", "X-XSRF-Token", "X-Amz-Security-Token",
        "X-Goog-Api-Key", "Private-Token", "Job-Token", "X-Gitlab-Token", "X-Vault-Token", "Ocp-Apim-Subscription-Key",
        "X-Shopify-Access-Token", "X-Auth-Key", "X-Api-Token", "DD-API-KEY", "DD-APPLICATION-KEY", "X-Algolia-API-Key",
    ]

    /// The largest response body kept in memory, counted after decompression. Default:
    /// ``defaultMaxResponseBytes`` (64 MiB). A body announced larger (`Content-Length`) fails
    /// before it is read. A transport that decodes bodies itself (`AsyncHTTPClientTransport`)
    /// also holds to it what a compressed body's encoding adds on the wire (the bytes received
    /// beyond those they decode to; 1/1024 and 1 KiB over it allowed), so a body that decodes to
    /// nothing cannot be sent without end, while one within the limit passes whatever its encoder
    /// adds; see ``ResponseBodyLimit/crossed(onTheWire:decoded:)``. `URLSessionTransport` cannot:
    /// the system decodes before Courier sees a byte, and a body that decodes to nothing is held
    /// only by a timeout.
    public var maxResponseBytes: Int64
    /// The largest body a download writes to disk, counted after decompression. Default:
    /// ``defaultMaxDownloadBytes`` (16 GiB). Held on the wire as ``maxResponseBytes`` is.
    public var maxDownloadBytes: Int64
    /// For a compressed body (`Content-Encoding` other than `identity`) whose compressed size is
    /// announced (`Content-Length`): at most this many decoded bytes per announced byte. Bodies
    /// that decode to 1 MiB or less are always allowed. Default: ``defaultMaxDecompressionRatio``
    /// (200; JSON compresses 5–20 times, a decompression bomb 1,000 times).
    ///
    /// The ratio is a first, early check, not the bound: a body sent without `Content-Length`
    /// (chunked), or one whose `Content-Length` overstates it, is held by ``maxResponseBytes`` or
    /// ``maxDownloadBytes`` alone (a body shorter than its `Content-Length` then fails as cut short,
    /// and a download's partial file is removed). URLSession on Linux decodes before Courier sees
    /// the bytes, so the compressed bytes received cannot be counted there.
    public var maxDecompressionRatio: Int64
    /// Redirects followed at most, whoever follows them. Default: ``defaultMaxRedirects`` (20).
    /// More fails with `URLError(.httpTooManyRedirects)`.
    public var maxRedirects: Int
    /// The URL schemes requests may use, on the first request and on every redirect hop, in any
    /// case (kept lowercased, as schemes are compared). Default: ``defaultAllowedSchemes`` (`http`,
    /// `https`). Any other scheme fails with ``CourierError/schemeNotAllowed(_:)`` and nothing is
    /// sent.
    public var allowedSchemes: Set<String> {
        // Lowercased when set, as by the initializer: `["HTTPS"]` set here refused every request.
        didSet { allowedSchemes = Self.lowercased(allowedSchemes) }
    }
    /// Streamed responses (``Provider/stream(_:idleTimeout:totalTimeout:)``): the longest line (``ResponseStream/lines``) or
    /// Server-Sent Event data (``ResponseStream/events``), in bytes. Default:
    /// ``defaultMaxLineBytes`` (1 MiB). Longer fails with ``LimitExceeded/line(limit:)``.
    public var maxLineBytes: Int64
    /// Streamed responses: the most bytes that arrived and the consumer has not read yet. Courier
    /// keeps up to 4 MiB of them in memory and the rest in a temporary file (removed when the
    /// stream ends), so a slow consumer costs disk, not memory, and never holds up the network or
    /// other requests. Where the temporary folder is a RAM file system (tmpfs, as `/tmp` is on
    /// many Linux distributions; `TMPDIR` moves it), that file is memory too: lower this limit
    /// there. Default: ``defaultMaxStreamBacklogBytes`` (2 GiB). More fails the stream
    /// with ``LimitExceeded/streamBacklog(limit:)``. A stream's total length has no limit: an
    /// event feed may run for days.
    public var maxStreamBacklogBytes: Int64
    /// Streamed responses: how much of the body of a refused response (a status the target's
    /// validation does not accept) is read into ``CourierError/statusCode(_:)``'s response
    /// before the connection is closed. Default: ``defaultMaxErrorBodyBytes`` (1 MiB).
    public var maxErrorBodyBytes: Int64
    /// Whether a `GET` or `HEAD` request may carry a body. Default: `false`: such a request fails
    /// with ``CourierError/requestMapping(_:)`` before anything is sent, because HTTP gives that
    /// body no meaning (RFC 9110 §9.3.1), proxies and servers drop or refuse it, and Apple's
    /// `URLSession` does not send it reliably. Set it for a server that reads one (Elasticsearch's
    /// search, for example), on the provider or on that target (``TargetType/limits``).
    public var allowsBodyInGETAndHEAD: Bool
    /// Whether a redirect from `https` to `http` is followed. Default: `false`: such a hop fails
    /// with ``CourierError/insecureRedirect(_:)`` and nothing goes out in cleartext. When `true`, a
    /// hop that carries no body is followed (credentials never follow a hop to another origin,
    /// and a change of scheme is one); a 307 or 308 that would repeat a body over `http` is
    /// refused all the same.
    public var allowsInsecureRedirects: Bool
    /// The request headers that carry credentials: removed from a request that a redirect sends
    /// to another origin (another scheme, host or port), and from a resumed download sent to a
    /// fresh URL on another origin (``DownloadResumption``), on every transport. Names are
    /// compared without case. Default: ``defaultCredentialHeaders``. Add the header your API's key
    /// travels in if it is not there; remove one only for redirects you trust, since the server
    /// that redirects chooses where they go.
    public var credentialHeaders: Set<String>

    /// Creates limits; every parameter has the default documented on its property.
    public init(
        maxResponseBytes: Int64 = Limits.defaultMaxResponseBytes,
        maxDownloadBytes: Int64 = Limits.defaultMaxDownloadBytes,
        maxDecompressionRatio: Int64 = Limits.defaultMaxDecompressionRatio,
        maxRedirects: Int = Limits.defaultMaxRedirects,
        allowedSchemes: Set<String> = Limits.defaultAllowedSchemes,
        maxLineBytes: Int64 = Limits.defaultMaxLineBytes,
        maxStreamBacklogBytes: Int64 = Limits.defaultMaxStreamBacklogBytes,
        maxErrorBodyBytes: Int64 = Limits.defaultMaxErrorBodyBytes,
        allowsBodyInGETAndHEAD: Bool = false,
        allowsInsecureRedirects: Bool = false,
        credentialHeaders: Set<String> = Limits.defaultCredentialHeaders
    ) {
        self.maxResponseBytes = maxResponseBytes
        self.maxDownloadBytes = maxDownloadBytes
        self.maxDecompressionRatio = maxDecompressionRatio
        self.maxRedirects = maxRedirects
        self.allowedSchemes = Self.lowercased(allowedSchemes)
        self.maxLineBytes = maxLineBytes
        self.maxStreamBacklogBytes = maxStreamBacklogBytes
        self.maxErrorBodyBytes = maxErrorBodyBytes
        self.allowsBodyInGETAndHEAD = allowsBodyInGETAndHEAD
        self.allowsInsecureRedirects = allowsInsecureRedirects
        self.credentialHeaders = credentialHeaders
    }

    /// Schemes as the checks compare them: lowercased (a URL's scheme is case-insensitive).
    private static func lowercased(_ schemes: Set<String>) -> Set<String> {
        Set(schemes.map { $0.lowercased() })
    }

    /// The defaults.
    public static let `default` = Limits()
}

/// Which limit a response or request crossed. Wrapped in ``CourierError/limitExceeded(_:)``.
public enum LimitExceeded: Error, Sendable, Hashable, CustomStringConvertible {
    /// The body kept in memory would exceed ``Limits/maxResponseBytes`` (the limit).
    case responseBody(limit: Int64)
    /// The downloaded file would exceed ``Limits/maxDownloadBytes`` (the limit).
    case downloadBody(limit: Int64)
    /// The body decoded to more than ``Limits/maxDecompressionRatio`` times its compressed size.
    case decompressionRatio(limit: Int64)
    /// Parameters nest deeper than ``ParameterValue/maximumDepth`` (the limit).
    case parameterDepth(limit: Int)
    /// A line of a streamed response, or the data of one Server-Sent Event, is longer than this.
    case line(limit: Int64)
    /// A streamed response's unread backlog (what arrived and the consumer has not read yet,
    /// kept in memory and a temporary file) is larger than this.
    case streamBacklog(limit: Int64)
    /// An event source's connections failed this many times in a row (each ended soon after it
    /// began, or after at most one event): see
    /// ``Provider/eventSource(_:reconnectionTime:minimumReconnectionTime:maxReconnects:idleTimeout:)``.
    case reconnects(limit: Int)
    /// More calls than ``TrafficPolicy/maxQueuedRequests`` (the limit) would wait for a slot.
    case trafficQueue(limit: Int)

    public var description: String {
        switch self {
        case .responseBody(let limit): "the response body is larger than the limit of \(limit) bytes"
        case .downloadBody(let limit): "the download is larger than the limit of \(limit) bytes"
        case .decompressionRatio(let limit): "the body decompresses to more than \(limit) times its size"
        case .parameterDepth(let limit): "the parameters nest deeper than \(limit) levels"
        case .line(let limit): "a line or event of the streamed response is longer than \(limit) bytes"
        case .streamBacklog(let limit):
            "the streamed response's unread backlog is larger than the limit of \(limit) bytes"
        case .reconnects(let limit):
            "the event source reconnected \(limit) times in a row without an established connection"
        case .trafficQueue(let limit): "more than \(limit) calls would wait for a slot in the provider's traffic queue"
        }
    }
}
