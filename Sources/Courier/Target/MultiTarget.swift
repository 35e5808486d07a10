import Foundation

/// A target of any type, so one `Provider<MultiTarget>` can serve many target types.
///
/// ```swift
/// let provider = Provider<MultiTarget>()
/// let user = try await provider.request(MultiTarget(GitHub.user("octocat")))
/// let post = try await provider.request(MultiTarget(Blog.post(id: 1)))
/// ```
///
/// Every property forwards to the wrapped target. Plugins receive the wrapped target, so checks
/// such as `target as? AccessTokenAuthorizable` see the real type.
public enum MultiTarget: TargetType {
    /// Wraps a target.
    case target(any TargetType)

    /// Wraps a target.
    /// - Parameter target: The target to wrap.
    public init(_ target: any TargetType) {
        self = .target(target)
    }

    /// The wrapped target.
    public var target: any TargetType {
        switch self {
        case .target(let target): target
        }
    }

    public var baseURL: URL { target.baseURL }
    public var path: String { target.path }
    public var method: HTTPMethod { target.method }
    public var task: HTTPTask { target.task }
    public var headers: [String: String] { target.headers }
    public var validation: ValidationType { target.validation }
    public var errorBody: ErrorBody? { target.errorBody }
    public var sampleData: Data { target.sampleData }
    public var sampleResponse: SampleResponse { target.sampleResponse }
    public var timeout: Duration? { target.timeout }
    public var callTimeout: Duration? { target.callTimeout }
    public var limits: Limits? { target.limits }
    public var deduplication: Deduplication? { target.deduplication }
    public var retryPolicy: RetryPolicy? { target.retryPolicy }
    public var cachePolicy: CachePolicy { target.cachePolicy }  // HTTP cache (issue 26)
    public var traffic: TrafficClass { target.traffic }
    public var downloadResumption: DownloadResumption { target.downloadResumption }  // Durable downloads (27)
    public var requestCompression: RequestCompression? { target.requestCompression }  // compressed uploads
}

extension TargetType {
    /// The target plugins are shown: the wrapped one for a ``MultiTarget``, otherwise `self`.
    var pluginTarget: any TargetType {
        // The metatype comparison is free; the cast only runs for a MultiTarget.
        if Self.self == MultiTarget.self, let multi = self as? MultiTarget {
            return multi.target.pluginTarget
        }
        return self
    }
}
