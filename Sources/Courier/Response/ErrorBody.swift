import Foundation

/// How to read the error body an API sends with a refused status, so the thrown error carries it.
///
/// When validation refuses a response (``TargetType/validation``) and its body decodes, the caller
/// gets ``CourierError/apiError(_:_:)`` with the decoded value and the response; when the body is
/// empty or does not decode, the plain ``CourierError/statusCode(_:)``, the body kept whole.
///
/// ```swift
/// struct GitHubError: Decodable, Error, Sendable { var message: String }
///
/// let provider = Provider<GitHub>(errorBody: .json(GitHubError.self))
/// do {
///     try await provider.request(.createIssue(repo: "me/app", issue))
/// } catch {
///     if let problem = error.apiError(as: GitHubError.self) { print(problem.message) }
/// }
/// ```
///
/// A target can name its own (``TargetType/errorBody``); otherwise the provider's applies. Retries
/// and credential refresh see the status error; the body is decoded once, for the caller, after
/// them, off the provider actor.
public struct ErrorBody: Sendable {
    let decode: @Sendable (Response) -> (any Error & Sendable)?

    /// Reads error bodies with `decode`; `nil` when the body is not one.
    /// - Parameter decode: Returns the API's error for a refused response, or `nil`.
    public init(decode: @escaping @Sendable (Response) -> (any Error & Sendable)?) {
        self.decode = decode
    }

    /// Error bodies that are JSON of type `type`, decoded with `decoder`.
    /// - Parameters:
    ///   - type: The API's error type.
    ///   - decoder: The decoder. Default: a new `JSONDecoder`.
    /// - Returns: The error body reader.
    public static func json<APIError: Decodable & Error & Sendable>(
        _ type: APIError.Type, decoder: JSONDecoder = JSONDecoder()
    ) -> ErrorBody {
        ErrorBody { response in
            guard !response.data.isEmpty else { return nil }
            return try? decoder.decode(APIError.self, from: response.data)
        }
    }

    /// `error` with its refused response's body decoded, where it decodes.
    func applied(to error: CourierError) -> CourierError {
        switch error {
        case .statusCode(let response):
            decode(response).map { .apiError($0, response) } ?? error
        case .retryLimitReached(let attempts, let lastError):
            .retryLimitReached(attempts: attempts, lastError: applied(to: lastError))
        default:
            error
        }
    }
}

extension CourierError {
    /// The API's error decoded from the refused response's body (``ErrorBody``), if it is of
    /// type `type`; also for the last attempt of ``retryLimitReached(attempts:lastError:)``.
    /// - Parameter type: The API's error type.
    /// - Returns: The decoded error, or `nil`.
    public func apiError<APIError>(as type: APIError.Type) -> APIError? {
        switch self {
        case .apiError(let value, _): value as? APIError
        case .retryLimitReached(_, let lastError): lastError.apiError(as: type)
        default: nil
        }
    }
}
