import Foundation

/// One stored response, as a ``CacheStorage`` keeps it.
///
/// It holds what RFC 9111 needs to answer later: the head and body, when the request went out
/// and the response came back (for the age), and a digest of each request header the response
/// varies on (`Vary`), never the header values themselves. `Set-Cookie` is not kept.
public struct CachedResponse: Sendable, Hashable {
    /// The URL that answered.
    public var url: URL
    /// The status code.
    public var statusCode: Int
    /// The response header fields, names as received.
    public var headers: [String: String]
    /// The body.
    public var body: Data
    /// When the request that fetched it was sent (RFC 9111 `request_time`).
    public var requestTime: Date
    /// When the response arrived (RFC 9111 `response_time`).
    public var responseTime: Date
    /// For each request header named in `Vary` (lowercased): a digest of the value the request
    /// had, or `"-"` when it had none.
    public var varyDigests: [String: String]

    /// Creates a stored response.
    public init(
        url: URL, statusCode: Int, headers: [String: String], body: Data, requestTime: Date, responseTime: Date,
        varyDigests: [String: String]
    ) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyDigests = varyDigests
    }

    /// The size storage limits count: the body, the URL and the header fields.
    public var byteCount: Int {
        body.count + url.absoluteString.utf8.count + headerByteCount
    }

    /// The bytes of the header names and values (and of the vary digests).
    public var headerByteCount: Int {
        headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 4 }
            + varyDigests.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 4 }
    }

    /// The value of a header, matched without regard to case.
    func header(_ name: String) -> String? {
        CacheRules.header(name, in: headers)
    }
}
