import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Whether a download resumes where it stopped (``TargetType/downloadResumption``).
///
/// ```swift
/// var downloadResumption: DownloadResumption {
///     .enabled(id: "model-\(name)") { _ in try await api.signedURL(for: name) }
/// }
/// ```
///
/// When enabled, the bytes of a download that fails part way are kept with the response's strong
/// validator (a strong `ETag`, or a `Last-Modified` date), and the next attempt (a retry by the
/// ``RetryPolicy``, or a later call with the same ``id``) asks only for the rest with
/// `Range: bytes=N-` and `If-Range`. See <doc:UploadsDownloadsAndProgress> for what each answer
/// does and where the bytes are kept.
public struct DownloadResumption: Sendable {
    /// Gives the URL for a resumed attempt: the URL it would use in, the one to use out.
    public typealias FreshURL = @Sendable (_ url: URL) async throws -> URL

    /// Names the download across calls; `nil`: the request's method and URL.
    public let id: String?
    /// Called before each attempt that resumes, for a URL that has not expired. `nil`: the
    /// request's URL as it is.
    public let freshURL: FreshURL?
    let isEnabled: Bool

    /// Never resume (the default): a failed download leaves nothing behind.
    public static let disabled = DownloadResumption(id: nil, freshURL: nil, isEnabled: false)

    /// Resume downloads of this target.
    /// - Parameters:
    ///   - id: Names the download, so a later call finds its bytes. Default: `nil`, the
    ///     request's method and URL (give an id when the URL changes between calls, as a signed
    ///     URL does).
    ///   - freshURL: Gives the URL for an attempt that resumes (signed URLs expire). Its errors
    ///     end the attempt and keep the bytes. It runs after plugins and signing; on another
    ///     origin the attempt goes without the credential headers (``Limits/credentialHeaders``),
    ///     as a redirect would. Default: `nil`, the same URL.
    /// - Returns: The setting.
    public static func enabled(id: String? = nil, freshURL: FreshURL? = nil) -> DownloadResumption {
        DownloadResumption(id: id, freshURL: freshURL, isEnabled: true)
    }

    private init(id: String?, freshURL: FreshURL?, isEnabled: Bool) {
        self.id = id
        self.freshURL = freshURL
        self.isEnabled = isEnabled
    }

    /// The key the bytes are kept under.
    func key(for request: URLRequest) -> String {
        id ?? "\(request.httpMethod ?? "GET") \(request.url?.absoluteString ?? "")"
    }
}
