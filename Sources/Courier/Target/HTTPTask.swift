import Foundation

/// What a request carries: its body and any URL parameters.
///
/// Named `HTTPTask` so it does not shadow Swift concurrency's `Task`. Every case is turned into
/// bytes by ``Endpoint/urlRequest()``, off the provider actor; encoding failures throw
/// ``CourierError/encodableMapping(_:)`` or ``CourierError/parameterEncoding(_:)``.
///
/// Two tasks are equal when they would send the same content: `json` cases are compared by their
/// encoded JSON with keys sorted, so key order never makes two equal values differ.
public enum HTTPTask: Sendable {
    /// No body and no parameters.
    case plain
    /// This body, sent as is. Set `Content-Type` in the target's headers.
    case data(Data)
    /// An `Encodable` value encoded as JSON with `encoder`. The default encoder writes keys sorted
    /// (`JSONEncoder.sortedKeys()`), so equal values always send the same bytes.
    /// Sets `Content-Type: application/json` unless the headers already set a content type.
    case json(any Encodable & Sendable, encoder: JSONEncoder = .sortedKeys())
    /// Parameters encoded by `encoding` into the query string or the body.
    case parameters(Parameters, encoding: ParameterEncoding)
    /// A raw body plus URL query parameters.
    case compositeData(Data, urlParameters: Parameters)
    /// Body parameters (encoded into the body by `bodyEncoding`, which must not be
    /// ``ParameterEncoding/queryString``) plus URL query parameters.
    case compositeParameters(
        bodyParameters: Parameters, bodyEncoding: ParameterEncoding, urlParameters: Parameters)
    /// Uploads a file, streamed from disk, plus URL query parameters. Set `Content-Type` in the
    /// headers. The method must be able to carry a body (not `GET`, `HEAD` or `TRACE`).
    case uploadFile(URL, urlParameters: Parameters = [:])
    /// Uploads a `multipart/form-data` body, plus URL query parameters. Sets `Content-Type` (with
    /// the boundary) and `Content-Length`. Large bodies go through a temporary file (see
    /// ``MultipartFormData/memoryThreshold``). The method must be able to carry a body.
    case uploadMultipart(MultipartFormData, urlParameters: Parameters = [:])
    /// Downloads the response body to a file, streamed to disk, then moved to `destination` when
    /// the request succeeds. ``Response/fileURL`` is where it went.
    case download(DownloadDestination)
    /// A download whose request carries parameters.
    case downloadParameters(Parameters, encoding: ParameterEncoding, destination: DownloadDestination)

    /// The download destination, for the download cases.
    var downloadDestination: DownloadDestination? {
        switch self {
        case .download(let destination), .downloadParameters(_, _, let destination): destination
        default: nil
        }
    }
}

extension HTTPTask: Hashable {
    public static func == (lhs: HTTPTask, rhs: HTTPTask) -> Bool {
        switch (lhs, rhs) {
        case (.plain, .plain):
            true
        case (.data(let a), .data(let b)):
            a == b
        case (.json(let a, let encoderA), .json(let b, let encoderB)):
            HTTPTask.encodedJSON(a, encoderA) == HTTPTask.encodedJSON(b, encoderB)
        case (.parameters(let a, let encodingA), .parameters(let b, let encodingB)):
            a == b && encodingA == encodingB
        case (.compositeData(let a, let urlA), .compositeData(let b, let urlB)):
            a == b && urlA == urlB
        case (
            .compositeParameters(let bodyA, let encodingA, let urlA),
            .compositeParameters(let bodyB, let encodingB, let urlB)
        ):
            bodyA == bodyB && encodingA == encodingB && urlA == urlB
        case (.uploadFile(let a, let urlA), .uploadFile(let b, let urlB)):
            a == b && urlA == urlB
        case (.uploadMultipart(let a, let urlA), .uploadMultipart(let b, let urlB)):
            a == b && urlA == urlB
        case (.download(let a), .download(let b)):
            a == b
        case (
            .downloadParameters(let a, let encodingA, let destA), .downloadParameters(let b, let encodingB, let destB)
        ):
            a == b && encodingA == encodingB && destA == destB
        default:
            false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .plain:
            hasher.combine(0)
        case .data(let data):
            hasher.combine(1)
            hasher.combine(data)
        case .json(let value, let encoder):
            hasher.combine(2)
            hasher.combine(HTTPTask.encodedJSON(value, encoder))
        case .parameters(let parameters, let encoding):
            hasher.combine(3)
            hasher.combine(parameters)
            hasher.combine(encoding)
        case .compositeData(let data, let urlParameters):
            hasher.combine(4)
            hasher.combine(data)
            hasher.combine(urlParameters)
        case .compositeParameters(let body, let encoding, let urlParameters):
            hasher.combine(5)
            hasher.combine(body)
            hasher.combine(encoding)
            hasher.combine(urlParameters)
        case .uploadFile(let url, let urlParameters):
            hasher.combine(6)
            hasher.combine(url)
            hasher.combine(urlParameters)
        case .uploadMultipart(let form, let urlParameters):
            hasher.combine(7)
            hasher.combine(form)
            hasher.combine(urlParameters)
        case .download(let destination):
            hasher.combine(8)
            hasher.combine(destination)
        case .downloadParameters(let parameters, let encoding, let destination):
            hasher.combine(9)
            hasher.combine(parameters)
            hasher.combine(encoding)
            hasher.combine(destination)
        }
    }

    /// The canonical JSON used for equality: encoded with the task's encoder, then rewritten with
    /// sorted keys. A value that fails to encode is `nil`, the same in `==` and `hash(into:)`.
    private static func encodedJSON(_ value: any Encodable & Sendable, _ encoder: JSONEncoder) -> Data? {
        guard let data = try? encoder.encode(value) else { return nil }
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
            let canonical = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return data }
        return canonical
    }
}

extension JSONEncoder {
    /// A new encoder that writes object keys in sorted order (and does not escape `/`): the default
    /// for ``HTTPTask/json(_:encoder:)``, so equal values always produce the same body.
    /// - Returns: The encoder.
    public static func sortedKeys() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
