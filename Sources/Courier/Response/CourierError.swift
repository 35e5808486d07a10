import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every error Courier throws.
///
/// Each case keeps what caused it: the underlying error where there is one, and the ``Response``
/// where one arrived (``response``). Provider requests use typed throws, so `catch` gives you a
/// `CourierError` directly.
public enum CourierError: Error, Sendable {
    /// The target could not become a request: an invalid URL, method or header. The text says why.
    case requestMapping(String)
    /// Parameters could not be encoded (``ParameterEncodingFailure`` or an encoder's error).
    case parameterEncoding(any Error)
    /// An `Encodable` body could not be encoded (the encoder's error).
    case encodableMapping(any Error)
    /// A multipart body could not be built (``MultipartFailure``, or a file error).
    case multipartEncoding(any Error)
    /// A download could not be saved where its ``DownloadDestination`` said (``DownloadFailure``,
    /// or a file error).
    case downloadDestination(any Error)
    /// The status code failed validation or a `filter`; carries the response.
    case statusCode(Response)
    /// The status code failed validation and the body decoded as the API's error (``ErrorBody``):
    /// the decoded value, and the response with its body whole. ``apiError(as:)`` reads it.
    case apiError(any Error & Sendable, Response)
    /// The body is not valid JSON, or a key path led nowhere.
    case jsonMapping(any Error, Response)
    /// The body is not UTF-8, or the key path does not lead to a string.
    case stringMapping(Response)
    /// Decoding failed (the `DecodingError`).
    case objectMapping(any Error, Response)
    /// The request did not finish within its deadline (the duration allowed).
    case timedOut(Duration)
    /// The request was cancelled (its Swift task was cancelled). See ``isCancellation``.
    case cancelled
    /// The transport failed, e.g. `URLError(.cannotConnectToHost)`, with the response if one came.
    case underlying(any Error, Response?)
    /// The request was sent `attempts` times (``RetryPolicy``) and the last attempt failed with
    /// `lastError`. ``response`` and ``underlyingError`` are the last attempt's.
    indirect case retryLimitReached(attempts: Int, lastError: CourierError)
    /// The credential could not be refreshed (``AuthenticationFailure``).
    case authentication(AuthenticationFailure)
    /// A limit was crossed (``Limits``): the response body, a download, the decompression ratio or
    /// the nesting of parameters. Nothing more was read or kept.
    case limitExceeded(LimitExceeded)
    /// The request, or a redirect it received, uses a URL scheme outside ``Limits/allowedSchemes``
    /// (the URL). Nothing was sent to it.
    case schemeNotAllowed(URL)
    /// An API was used in a way it does not support (the text says how), such as iterating one
    /// progress stream from two tasks.
    ///
    /// It also carries the one internal invariant Courier reports instead of trapping: a call
    /// whose state machine is out of step ("the call's state machine is out of step"), which no
    /// use of the API can cause; report it as a bug. It is not a case of its own because a new
    /// case would break every `switch` over `CourierError` written against 0.1.0.
    case invalidUse(String)
    /// The server's certificate was refused (self-signed, expired, for another host, from an
    /// unknown authority…), so nothing was sent: the host asked for, why
    /// (``ServerTrustReason``), and the transport's own error.
    case serverTrust(host: String, reason: ServerTrustReason, underlying: any Error)
    /// A redirect from `https` to `http` (the target) was refused: nothing was sent in cleartext.
    /// ``Limits/allowsInsecureRedirects`` lets such a hop through when it carries no body.
    case insecureRedirect(URL)
    /// The target asks for a compressed body (``TargetType/requestCompression``) and it could not
    /// be compressed (``RequestCompressionFailure``): the request already names a
    /// `Content-Encoding`, or its body could not be read. Nothing was sent.
    case requestCompression(RequestCompressionFailure)  // compressed uploads

    /// The response involved, when there is one.
    public var response: Response? {
        switch self {
        case .statusCode(let response), .stringMapping(let response),
            .jsonMapping(_, let response), .objectMapping(_, let response), .apiError(_, let response):
            response
        case .underlying(_, let response):
            response
        case .retryLimitReached(_, let lastError):
            lastError.response
        case .authentication, .limitExceeded, .schemeNotAllowed, .invalidUse, .serverTrust, .insecureRedirect,
            .requestCompression:
            nil
        case .requestMapping, .parameterEncoding, .encodableMapping, .multipartEncoding,
            .downloadDestination, .timedOut, .cancelled:
            nil
        }
    }

    /// The error that caused this one, when there is one.
    public var underlyingError: (any Error)? {
        switch self {
        case .parameterEncoding(let error), .encodableMapping(let error), .multipartEncoding(let error),
            .downloadDestination(let error), .jsonMapping(let error, _), .objectMapping(let error, _),
            .underlying(let error, _), .serverTrust(_, _, let error):
            error
        case .apiError(let error, _):
            error
        case .retryLimitReached(_, let lastError):
            lastError.underlyingError ?? lastError
        case .authentication(let failure):
            failure.cause
        case .limitExceeded(let limit):
            limit
        case .requestCompression(let failure):
            if case .io(let error) = failure { error } else { failure }
        case .schemeNotAllowed, .invalidUse, .insecureRedirect:
            nil
        case .requestMapping, .statusCode, .stringMapping, .timedOut, .cancelled:
            nil
        }
    }

    /// Whether the request ended because it was cancelled. This is the one check for
    /// cancellation: Courier never throws `CancellationError` or `URLError(.cancelled)` from a request.
    public var isCancellation: Bool {
        if case .cancelled = self { return true }
        return false
    }

    /// Whether the request ran out of time: its deadline passed (``timedOut(_:)``) or the
    /// transport reported `URLError(.timedOut)`.
    public var isTimeout: Bool {
        switch self {
        case .timedOut: true
        case .underlying(let error, _): (error as? URLError)?.code == .timedOut
        case .retryLimitReached(_, let lastError): lastError.isTimeout
        default: false
        }
    }

    /// Wraps any error as a `CourierError`: itself if it already is one, ``cancelled`` for
    /// `CancellationError` and `URLError(.cancelled)`, ``serverTrust(host:reason:underlying:)``
    /// for URLSession's refusal of a server certificate, ``underlying(_:_:)`` otherwise.
    /// - Parameter error: The error to wrap.
    public init(_ error: any Error) {
        switch error {
        case let courier as CourierError:
            self = courier
        case is CancellationError:
            self = .cancelled
        default:
            let normalized = URLErrors.normalize(error)
            if let urlError = normalized as? URLError, urlError.code == .cancelled {
                self = .cancelled
            } else if let refused = CourierError.serverTrust(from: normalized, url: nil) {
                self = refused
            } else {
                self = .underlying(normalized, nil)
            }
        }
    }
}

extension CourierError: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case .requestMapping(let reason):
            "Could not build the request: \(reason)."
        case .parameterEncoding(let error):
            "Could not encode the parameters: \(error)."
        case .encodableMapping(let error):
            "Could not encode the body: \(error)."
        case .multipartEncoding(let error):
            "Could not build the multipart body: \(error)."
        case .downloadDestination(let error):
            "Could not save the download: \(error)."
        case .statusCode(let response):
            "Status code \(response.statusCode) is not accepted."
        case .apiError(let error, let response):
            "Status code \(response.statusCode) is not accepted: \(error)."
        case .jsonMapping(let error, let response):
            "Could not read the body (\(response.data.count) bytes) as JSON: \(error)."
        case .stringMapping(let response):
            "Could not read a string from the body (\(response.data.count) bytes)."
        case .objectMapping(let error, _):
            "Could not decode the body: \(error)."
        case .timedOut(let duration):
            "The request did not finish within \(duration)."
        case .cancelled:
            "The request was cancelled."
        case .underlying(let error, let response):
            "The request failed: \(Self.describe(error))"
                + (response.map { " (status \($0.statusCode))" } ?? "") + "."
        case .retryLimitReached(let attempts, let lastError):
            "The request failed after \(attempts) attempts. "
                + (lastError.errorDescription ?? "\(lastError)")
        case .authentication(let failure):
            "Authentication failed: \(failure)."
        case .limitExceeded(let limit):
            "A limit was crossed: \(limit)."
        case .schemeNotAllowed(let url):
            "The URL scheme '\(url.scheme ?? "")' is not allowed (\(Redaction.url(url)))."
        case .invalidUse(let reason):
            "Invalid use: \(reason)."
        case .serverTrust(let host, let reason, _):
            "The server's certificate for \(host) was refused: \(reason)."
        case .insecureRedirect(let url):
            "A redirect from https to http was refused (\(Redaction.url(url)))."
        case .requestCompression(let failure):
            "Could not compress the request body: \(failure)."
        }
    }
}

extension CourierError: CustomNSError {
    /// The `NSError` domain a `CourierError` bridges to: `"Courier.CourierError"`.
    public static var errorDomain: String { "Courier.CourierError" }

    /// A number per case, stable across releases: ``requestMapping(_:)`` 1,
    /// ``parameterEncoding(_:)`` 2, ``encodableMapping(_:)`` 3, ``multipartEncoding(_:)`` 4,
    /// ``downloadDestination(_:)`` 5, ``statusCode(_:)`` 6, ``jsonMapping(_:_:)`` 7,
    /// ``stringMapping(_:)`` 8, ``objectMapping(_:_:)`` 9, ``timedOut(_:)`` 10, ``cancelled`` 11,
    /// ``underlying(_:_:)`` 12, ``retryLimitReached(attempts:lastError:)`` 13,
    /// ``authentication(_:)`` 14, ``limitExceeded(_:)`` 15, ``schemeNotAllowed(_:)`` 16,
    /// ``invalidUse(_:)`` 17, ``apiError(_:_:)`` 18, ``serverTrust(host:reason:underlying:)`` 19,
    /// ``insecureRedirect(_:)`` 20, ``requestCompression(_:)`` 21.
    public var errorCode: Int {
        switch self {
        case .requestMapping: 1
        case .parameterEncoding: 2
        case .encodableMapping: 3
        case .multipartEncoding: 4
        case .downloadDestination: 5
        case .statusCode: 6
        case .jsonMapping: 7
        case .stringMapping: 8
        case .objectMapping: 9
        case .timedOut: 10
        case .cancelled: 11
        case .underlying: 12
        case .retryLimitReached: 13
        case .authentication: 14
        case .limitExceeded: 15
        case .schemeNotAllowed: 16
        case .invalidUse: 17
        case .apiError: 18
        case .serverTrust: 19
        case .insecureRedirect: 20
        case .requestCompression: 21
        }
    }

    /// What the bridged `NSError` carries: the description (`NSLocalizedDescriptionKey`, the same
    /// text as `localizedDescription`) and, when there is one, ``underlyingError`` under
    /// `NSUnderlyingErrorKey`, as Moya's error does.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description]
        if let underlyingError { info[NSUnderlyingErrorKey] = underlyingError as NSError }
        return info
    }
}

extension CourierError {
    /// URLSession's own message where it gave one (on Linux, `localizedDescription` is only the
    /// domain and code), without a trailing period.
    fileprivate static func describe(_ error: any Error) -> String {
        var text: String
        if let urlError = error as? URLError {
            text =
                (urlError.userInfo[NSLocalizedDescriptionKey] as? String)
                .map { "\($0) (URLError \(urlError.code.rawValue))" }
                ?? "URLError \(urlError.code.rawValue)"
        } else {
            text = "\(error)"
        }
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }
}

extension CourierError: CustomStringConvertible {
    public var description: String { errorDescription ?? "CourierError" }
}

enum URLErrors {
    /// On Linux, URLSession reports failures as `NSError` in `NSURLErrorDomain`, which does not
    /// cast to `URLError`; rebuild them so `error as? URLError` works on every platform.
    static func normalize(_ error: any Error) -> any Error {
        if error is URLError { return error }
        let nsError = error as NSError
        // `URLError.Code(rawValue:)` is failable on Linux and not on Apple platforms.
        let code: URLError.Code? = URLError.Code(rawValue: nsError.code)
        guard nsError.domain == NSURLErrorDomain, let code else { return error }
        return URLError(code, userInfo: nsError.userInfo)
    }
}
