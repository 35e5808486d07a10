import Foundation

/// One API call, described as values: where it goes, how, and with what.
///
/// Conform an `enum` (one case per call, associated values for arguments) or a `struct` per
/// resource. ``baseURL``, ``path`` and ``headers`` are required (as in Moya); everything else has a
/// default.
///
/// ```swift
/// enum GitHub: TargetType {
///     case user(String)
///     var baseURL: URL { URL(string: "https://api.github.com")! }
///     var path: String {
///         switch self { case .user(let name): "users/\(name)" }
///     }
///     var headers: [String: String] { ["Accept": "application/vnd.github+json"] }
/// }
/// ```
public protocol TargetType: Sendable {
    /// The server's URL, e.g. `https://api.example.com/v1`. Its own query is kept.
    var baseURL: URL { get }

    /// The path appended to ``baseURL`` with exactly one `/` between them. Empty means the base URL
    /// itself. A `?` starts a query (`"search?q=swift"`); characters that cannot stand in a path are
    /// percent-encoded, and existing `%XX` escapes are kept.
    var path: String { get }

    /// The HTTP method. Default: `.get`.
    var method: HTTPMethod { get }

    /// The body and parameters. Default: `.plain`.
    var task: HTTPTask { get }

    /// Header fields; `[:]` for none. Required, without a default, so that a target written
    /// for Moya, whose `headers` are `[String: String]?`, fails to compile ("candidate has
    /// non-matching type") instead of having its headers silently ignored: drop the `?`, and
    /// write `[:]` where it returned `nil`.
    var headers: [String: String] { get }

    /// Which status codes count as success. Default: ``validationType``, which defaults to
    /// ``ValidationType/none``.
    var validation: ValidationType { get }

    /// Moya's name for ``validation``, honoured so a migrated target keeps its validation: when a
    /// target declares only this, it is its ``validation``; when it declares both, ``validation``
    /// wins. Default: ``ValidationType/none``.
    var validationType: ValidationType { get }

    /// How this target's API error bodies are read when validation refuses a response
    /// (``ErrorBody``). Default: `nil`, the provider's (``Provider/errorBody``).
    var errorBody: ErrorBody? { get }

    /// The body of the default ``sampleResponse``. Default: empty.
    var sampleData: Data { get }

    /// What a stubbed request answers with. Default: status 200 with ``sampleData``.
    var sampleResponse: SampleResponse { get }

    /// A deadline for each attempt: one send to the transport or stub, up to the whole response
    /// (for a stream, up to the head), overriding the provider's ``Provider/timeout``. Every retry
    /// gets a deadline of its own; to bound the whole call, with its retries and the waits between
    /// them, use ``callTimeout``. When it passes, the attempt fails with
    /// ``CourierError/timedOut(_:)`` (which the retry policy may retry). Default: `nil` (use the
    /// provider's).
    var timeout: Duration? { get }

    /// A deadline for the whole call (mappings, plugins, signing, every attempt and wait),
    /// overriding the provider's ``Provider/callTimeout``. Default: `nil` (use the provider's).
    var callTimeout: Duration? { get }

    /// Limits on bodies, decompression, redirects and schemes, replacing the provider's
    /// ``Provider/limits`` for this target. Default: `nil` (use the provider's).
    var limits: Limits? { get }

    /// Whether requests for this target are merged with identical ones in flight, overriding the
    /// provider's policy. Default: `nil` (use the provider's).
    var deduplication: Deduplication? { get }

    /// When failed requests for this target are sent again, overriding the provider's policy.
    /// Default: `nil` (use the provider's).
    var retryPolicy: RetryPolicy? { get }

    /// How requests for this target use the provider's ``HTTPCache`` (``CachePolicy``); without a
    /// cache on the provider it changes nothing. Default: ``CachePolicy/protocolRules``.
    var cachePolicy: CachePolicy { get }  // HTTP cache (issue 26)
    /// This target's priority and weight in the provider's traffic control (``TrafficPolicy``).
    /// Default: ``TrafficClass/normal``.
    var traffic: TrafficClass { get }
    /// Whether a download of this target resumes where it stopped (durable downloads, issue 27).
    /// Default: ``DownloadResumption/disabled``.
    var downloadResumption: DownloadResumption { get }
    /// Whether and how request bodies for this target are compressed (``RequestCompression``):
    /// `.gzip` or `.deflate`, above a minimum size. Default: `nil`, sent as they are.
    var requestCompression: RequestCompression? { get }  // compressed uploads
}

extension TargetType {
    public var method: HTTPMethod { .get }
    public var task: HTTPTask { .plain }
    public var validation: ValidationType { validationType }
    public var validationType: ValidationType { .none }
    public var errorBody: ErrorBody? { nil }
    public var sampleData: Data { Data() }
    public var sampleResponse: SampleResponse { .networkResponse(200, sampleData) }
    public var timeout: Duration? { nil }
    public var callTimeout: Duration? { nil }
    public var limits: Limits? { nil }
    public var deduplication: Deduplication? { nil }
    public var retryPolicy: RetryPolicy? { nil }
    public var cachePolicy: CachePolicy { .protocolRules }  // HTTP cache (issue 26)
    public var downloadResumption: DownloadResumption { .disabled }  // Durable downloads (27)
}
