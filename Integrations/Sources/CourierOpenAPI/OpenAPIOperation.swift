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
        /// The request body, collected (see ``CourierTransport``); `nil` for none.
        public let body: Data?
        /// The statuses refused, so that the provider's retry policy sees them: its retryable
        /// ones (``CourierTransport`` sets them); every other status is accepted.
        public let retriedStatusCodes: Set<Int>
    }

    /// The request.
    public var request: Request {
        switch self {
        case .operation(let request): request
        }
    }

    /// The operation ID: the name plugins see.
    public var description: String { request.operationID }

    public var baseURL: URL { request.baseURL }
    public var path: String { request.pathAndQuery }
    public var method: HTTPMethod { request.method }
    public var headers: [String: String] { request.headers }
    public var task: HTTPTask { request.body.map { .data($0) } ?? .plain }
    /// Every status but ``Request/retriedStatusCodes``: the generated client reads statuses itself
    /// (documented and `default` responses); the retryable ones are refused so that the provider
    /// can retry them.
    public var validation: ValidationType {
        request.retriedStatusCodes.isEmpty
            ? .none : .customCodes(Set(100..<600).subtracting(request.retriedStatusCodes))
    }
}
