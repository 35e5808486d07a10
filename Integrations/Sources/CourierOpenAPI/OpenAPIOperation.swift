import Courier
import Foundation

/// One request of an OpenAPI-generated client, as a Courier target: what ``CourierTransport``
/// sends through its provider.
///
/// Its `RequestContext`'s `targetName` is `OpenAPIOperation.<operationID>` (`OpenAPIOperation.getEcho`):
/// plugins, logs, metrics and spans name the operation, never its arguments. (`targetName` names an
/// enum's case by the value's description up to its first `(`: this enum's one case describes itself
/// as its operation ID.)
public enum OpenAPIOperation: TargetType, CustomStringConvertible {
    /// The operation, with everything the generated client put in the request.
    case operation(Request)

    /// What the generated client asked for.
    public struct Request: Sendable {
        /// The operation ID from the OpenAPI document.
        public let operationID: String
        /// The server's URL the client was made with.
        public let baseURL: URL
        /// The path and query, as the generated client wrote them (`/users/42?verbose=true`).
        public let pathAndQuery: String
        /// The method.
        public let method: HTTPMethod
        /// The header fields; repeated names joined with `, `.
        public let headers: [String: String]
        /// The request body, in memory or spooled to a temporary file (see ``CourierTransport``);
        /// `nil` for none.
        public let body: Body?
        /// The statuses refused, so that the provider's retry policy sees them: its retryable
        /// ones (``CourierTransport`` sets them); every other status is accepted.
        public let retriedStatusCodes: Set<Int>
    }

    /// A request body that every attempt of the call can send again.
    public enum Body: Sendable, Hashable {
        /// The bytes, for a body up to ``CourierTransport/memoryThreshold``.
        case data(Data)
        /// A temporary file holding a larger body, sent as a file upload; ``CourierTransport``
        /// removes it when the call ends.
        case file(URL)
    }

    /// The request.
    public var request: Request {
        switch self {
        case .operation(let request): request
        }
    }

    /// The operation ID: the name plugins see.
    public var description: String { request.operationID }

    /// The server's URL; with a trailing `/` for the operation at the path `/` (see ``path``).
    public var baseURL: URL {
        guard Self.isRootPath(request.pathAndQuery) else { return request.baseURL }
        return Self.withTrailingSlash(request.baseURL)
    }
    /// ``Request/pathAndQuery``, but without its `/` for the operation at the path `/`: an OpenAPI
    /// path is appended to the server's URL as written, so `/` under `https://host/api` is
    /// `https://host/api/`, where a target's path `/` leaves the base URL as it is (Courier's URL
    /// rules). That slash is put on ``baseURL`` instead.
    public var path: String {
        Self.isRootPath(request.pathAndQuery) ? String(request.pathAndQuery.dropFirst()) : request.pathAndQuery
    }

    /// `/`, or `/` followed by a query.
    static func isRootPath(_ pathAndQuery: String) -> Bool {
        pathAndQuery == "/" || pathAndQuery.hasPrefix("/?")
    }

    static func withTrailingSlash(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            !components.percentEncodedPath.hasSuffix("/")
        else { return url }
        components.percentEncodedPath += "/"
        return components.url ?? url
    }
    public var method: HTTPMethod { request.method }
    public var headers: [String: String] { request.headers }
    public var task: HTTPTask {
        switch request.body {
        case nil: .plain
        case .data(let data): .data(data)
        case .file(let url): .uploadFile(url)
        }
    }
    /// Every status but ``Request/retriedStatusCodes``: the generated client reads statuses itself
    /// (documented and `default` responses); the retryable ones are refused so that the provider
    /// can retry them.
    public var validation: ValidationType {
        request.retriedStatusCodes.isEmpty
            ? .none : .customCodes(Set(100..<600).subtracting(request.retriedStatusCodes))
    }
}

/// `AccessTokenPlugin` (`.accessToken`) sends its token as `Authorization: Bearer <token>` with
/// every operation, as the bridge's documentation shows; without this, the plugin skipped them all
/// and every call went out without credentials (found by review). Operations whose API wants
/// another scheme: set `Authorization` in a plugin of your own, or use `Authentication`.
extension OpenAPIOperation: AccessTokenAuthorizable {
    public var authorizationType: AuthorizationType? { .bearer }
}
