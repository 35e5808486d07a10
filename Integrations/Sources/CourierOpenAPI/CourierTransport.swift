import Courier
import Foundation
import HTTPTypes
import OpenAPIRuntime

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `ClientTransport` for swift-openapi-generator's clients that sends every request through a
/// Courier `Provider`: its plugins, retries (`Retry-After` included), credential refresh,
/// deadlines, limits, metrics, stubs and record/replay apply to generated clients too.
///
/// ```swift
/// let provider = Provider<OpenAPIOperation>(plugins: [.accessToken { _ in token }], retryPolicy: .default)
/// let client = Client(serverURL: try Servers.Server1.url(), transport: CourierTransport(provider: provider))
/// ```
///
/// Each request is an ``OpenAPIOperation`` whose target name is its operation ID, so
/// `RequestContext.targetName`, log lines, metrics and spans say `OpenAPIOperation.getEcho`.
///
/// ## Bodies
/// - The response body streams: the provider's `stream(_:)` hands over the head as soon as it is
///   accepted, and the body's chunks become the `HTTPBody`'s as they arrive (iterable once, with
///   Courier's backpressure and limits; its length is `Content-Length` when the server sent one and
///   the body is not encoded).
///   Cancelling the task that reads it, or dropping it, ends the transfer.
/// - The request body is never collected whole in memory. A body up to ``memoryThreshold``
///   (1 MiB by default) is kept in memory; a larger one, of known length or not, is streamed
///   (spooled) from the moment it grows past the threshold to a temporary file in
///   ``spoolDirectory``, written off Swift concurrency's threads, then sent as a file upload. So
///   every attempt — a retry, a re-send after a credential refresh — sends the same bytes again,
///   even from a body the client can iterate only once, and memory stays flat however large the
///   body. The file is new (never an existing file or a link), readable by its owner only, and
///   removed when the call ends: answered, failed or cancelled, during the spooling too.
/// - A body larger than ``maxRequestBodyBytes`` (256 MiB by default) fails with
///   ``CourierOpenAPIError/requestBodyTooLarge(limit:)`` before anything is sent: at once when its
///   length is known, when it crosses the limit otherwise. A spool file that cannot be written
///   fails with ``CourierOpenAPIError/requestBodySpoolFailed(_:reason:)``, nothing sent.
///
/// ## Statuses
/// The generated client turns documented and `default` responses into its `Output` itself, so
/// every status reaches it, except that the statuses the provider's `RetryPolicy` retries (408,
/// 429, 500, 502, 503, 504 by default) are retried first (``OpenAPIOperation/validation``). When
/// the last attempt still answers one, the client gets that response, with the start of its body
/// that Courier keeps for a refused status (`Limits.maxErrorBodyBytes`, 1 MiB by default).
/// Transport failures reach the client as the provider's `CourierError`, which the client wraps in
/// its `ClientError`.
public struct CourierTransport: ClientTransport {
    /// The default largest request body: 256 MiB.
    public static let defaultMaxRequestBodyBytes = 256 << 20
    /// The default largest request body kept in memory: 1 MiB.
    public static let defaultMemoryThreshold = 1 << 20

    /// The provider every request goes through.
    public let provider: Provider<OpenAPIOperation>
    /// The largest request body, in memory or spooled. Default: ``defaultMaxRequestBodyBytes``
    /// (256 MiB).
    public let maxRequestBodyBytes: Int
    /// The largest request body kept in memory; a larger one is spooled to a temporary file.
    /// Default: ``defaultMemoryThreshold`` (1 MiB).
    public let memoryThreshold: Int
    /// Where request bodies are spooled. Default: `FileManager.default.temporaryDirectory`.
    public let spoolDirectory: URL

    /// Creates a transport.
    /// - Parameters:
    ///   - provider: The provider every request goes through. Default: `Provider()` (URLSession,
    ///     no plugins, no retries).
    ///   - maxRequestBodyBytes: The largest request body, in memory or spooled; at least 0.
    ///     Default: ``defaultMaxRequestBodyBytes`` (256 MiB).
    ///   - memoryThreshold: The largest request body kept in memory; at least 0. Default:
    ///     ``defaultMemoryThreshold`` (1 MiB).
    ///   - spoolDirectory: Where larger request bodies are spooled. Default:
    ///     `FileManager.default.temporaryDirectory`.
    public init(
        provider: Provider<OpenAPIOperation> = Provider(),
        maxRequestBodyBytes: Int = CourierTransport.defaultMaxRequestBodyBytes,
        memoryThreshold: Int = CourierTransport.defaultMemoryThreshold,
        spoolDirectory: URL = FileManager.default.temporaryDirectory
    ) {
        self.provider = provider
        self.maxRequestBodyBytes = max(0, maxRequestBodyBytes)
        self.memoryThreshold = max(0, memoryThreshold)
        self.spoolDirectory = spoolDirectory
    }

    public func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let spool = RequestBodySpool(
            memoryThreshold: memoryThreshold, maxBytes: maxRequestBodyBytes, directory: spoolDirectory)
        let requestBody = try await spool.prepare(body)
        // Every attempt has been sent once the head is here (or the call failed): the file goes.
        defer { RequestBodySpool.remove(requestBody) }
        let operation = OpenAPIOperation.operation(
            OpenAPIOperation.Request(
                operationID: operationID, baseURL: baseURL, pathAndQuery: request.path ?? "",
                method: HTTPMethod(rawValue: request.method.rawValue), headers: Self.headers(request.headerFields),
                body: requestBody, retriedStatusCodes: retriedStatusCodes))
        let stream: ResponseStream
        do {
            stream = try await provider.stream(operation)
        } catch {
            // A retryable status after the last attempt: the client reads it as any other response.
            guard let response = Self.refusedResponse(error) else { throw error }
            let fields = Self.fields(response.response)
            return (
                HTTPResponse(status: try Self.status(response.statusCode), headerFields: fields),
                HTTPBody(response.data)
            )
        }
        let fields = Self.fields(stream.response)
        let response = HTTPResponse(status: try Self.status(stream.statusCode), headerFields: fields)
        return (response, HTTPBody(stream.chunks, length: Self.length(fields), iterationBehavior: .single))
    }

    /// The body's length: `Content-Length` when the body arrives as sent; unknown when it is encoded
    /// (transports decode `gzip` and `deflate`, so the bytes read differ from the header).
    static func length(_ fields: HTTPFields) -> HTTPBody.Length {
        let encoding = fields[.contentEncoding]?.lowercased() ?? "identity"
        guard encoding == "identity", let length = fields[.contentLength].flatMap({ Int64($0) }) else {
            return .unknown
        }
        return .known(length)
    }

    /// The status for the client. HTTPTypes traps on a code outside 0–999 (a stub's, or a
    /// transport's of its own): that is `URLError(.badServerResponse)` here (found by review).
    static func status(_ code: Int) throws(CourierError) -> HTTPResponse.Status {
        guard (0...999).contains(code) else { throw .underlying(URLError(.badServerResponse), nil) }
        return HTTPResponse.Status(code: code)
    }

    /// The statuses the provider's retry policy retries, when it retries at all.
    var retriedStatusCodes: Set<Int> {
        provider.retryPolicy.maxAttempts > 1 ? provider.retryPolicy.retryableStatusCodes : []
    }

    /// The response of a status refused only so that it could be retried.
    static func refusedResponse(_ error: CourierError) -> Response? {
        switch error {
        case .statusCode(let response), .apiError(_, let response): response
        case .retryLimitReached(_, let lastError): refusedResponse(lastError)
        default: nil
        }
    }

    /// A response head's header fields.
    static func fields(_ response: HTTPURLResponse?) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in response?.allHeaderFields ?? [:] {
            guard let name = (name as? String).flatMap({ HTTPField.Name($0) }), let value = value as? String else {
                continue
            }
            fields.append(HTTPField(name: name, value: value))
        }
        return fields
    }

    /// The fields as a dictionary; a repeated name's values joined with `, ` under its first
    /// spelling, and `Cookie`'s with `; ` (RFC 6265 §5.4: `a=1, b=2` would be one cookie `a`;
    /// found by review).
    static func headers(_ fields: HTTPFields) -> [String: String] {
        var headers: [String: String] = [:]
        var spelling: [String: String] = [:]
        for field in fields {
            let key = spelling[field.name.canonicalName] ?? field.name.rawName
            spelling[field.name.canonicalName] = key
            let separator = field.name == .cookie ? "; " : ", "
            headers[key] = headers[key].map { $0 + separator + field.value } ?? field.value
        }
        return headers
    }
}
