import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Endpoint {
    /// Builds the `URLRequest`: URL with any query parameters, method, headers and encoded body.
    ///
    /// A multipart form's body is in the request when it is small (see ``MultipartFormData``:
    /// data parts up to its ``MultipartFormData/memoryThreshold``, file parts up to
    /// ``MultipartFormData/maxBodyReadInRequest``); otherwise it is built when the request is sent,
    /// and ``MultipartFormData/encodedBody(maxBytes:)`` gives it. A file upload's body is never in
    /// the request.
    ///
    /// - Returns: The request, ready for plugins' `prepare` and the transport.
    /// - Throws: ``CourierError/requestMapping(_:)`` for an invalid method, header or URL;
    ///   ``CourierError/encodableMapping(_:)`` when an `Encodable` body fails to encode;
    ///   ``CourierError/parameterEncoding(_:)`` when parameters cannot be encoded;
    ///   ``CourierError/multipartEncoding(_:)`` when a form cannot be built.
    public func urlRequest() throws(CourierError) -> URLRequest {
        guard method.isValidToken else {
            throw .requestMapping("'\(method.rawValue)' is not a valid HTTP method name")
        }
        var request = URLRequest(url: url)
        // GET is the default; FoundationNetworking's setter normalizes the name, which is costly.
        if method != .get { request.httpMethod = method.rawValue }
        for (name, value) in headers {
            try HeaderValidation.validate(name: name, value: value)
            request.setValue(value, forHTTPHeaderField: name)
        }

        switch task {
        case .plain:
            break
        case .data(let data):
            request.httpBody = data
        case .json(let value, let encoder):
            try Self.setJSONBody(value, encoder: encoder, on: &request)
        case .parameters(let parameters, let encoding):
            try Self.encode(parameters, with: encoding, method: method, into: &request)
        case .compositeData(let data, let urlParameters):
            try Self.appendQuery(urlParameters, to: &request)
            request.httpBody = data
        case .compositeParameters(let bodyParameters, let bodyEncoding, let urlParameters):
            if case .url(let options) = bodyEncoding.kind, options.destination == .queryString {
                throw .parameterEncoding(ParameterEncodingFailure.queryStringUsedForBody)
            }
            try Self.appendQuery(urlParameters, to: &request)
            var forcedBody = bodyEncoding
            if case .url(var options) = bodyEncoding.kind {
                options.destination = .httpBody
                forcedBody = .url(options)
            }
            try Self.encode(bodyParameters, with: forcedBody, method: method, into: &request)
        case .uploadFile(let fileURL, let urlParameters):
            try Self.requireBody(for: method, what: "a file upload")
            do {
                _ = try FileBody.regularFileSize(fileURL)
            } catch {
                throw .requestMapping("the upload file cannot be sent: \(error)")
            }
            try Self.appendQuery(urlParameters, to: &request)
        case .uploadMultipart(let form, let urlParameters):
            try Self.requireBody(for: method, what: "a multipart upload")
            try MultipartEncoder.validate(form)
            try Self.appendQuery(urlParameters, to: &request)
            let length = try MultipartEncoder.totalLength(form)
            request.setValue(MultipartEncoder.contentType(form), forHTTPHeaderField: "Content-Type")
            request.setValue(String(length), forHTTPHeaderField: "Content-Length")
            if MultipartEncoder.isBuiltInRequest(form, length: length) {
                request.httpBody = try MultipartEncoder.encodeInMemory(form, length: length)
            }
        // Other bodies are built when the request is sent, off Swift's thread pool: in memory up
        // to the threshold, through a temporary file above it.
        case .download:
            break
        case .downloadParameters(let parameters, let encoding, _):
            try Self.encode(parameters, with: encoding, method: method, into: &request)
        }
        return request
    }

    /// Uploads need a method that can carry a body.
    static func requireBody(for method: HTTPMethod, what: String) throws(CourierError) {
        if method == .get || method == .head || method == .trace {
            throw .requestMapping("\(what) cannot use \(method.rawValue), which carries no body")
        }
    }

    static func setJSONBody(
        _ value: any Encodable & Sendable, encoder: JSONEncoder, on request: inout URLRequest
    ) throws(CourierError) {
        do {
            request.httpBody = try encoder.encode(value)
        } catch {
            throw .encodableMapping(error)
        }
        setContentTypeIfAbsent("application/json", on: &request)
    }

    static func encode(
        _ parameters: Parameters, with encoding: ParameterEncoding, method: HTTPMethod,
        into request: inout URLRequest
    ) throws(CourierError) {
        try ParameterValue.checkDepth(of: parameters)
        switch encoding.kind {
        case .json:
            // The same failure URL encoding gives (JSONEncoder's own `EncodingError` said it less
            // plainly, and a caller matching `nonFiniteNumber` missed it; found by review).
            if let key = ParameterValue.nonFiniteKey(in: parameters) {
                throw .parameterEncoding(ParameterEncodingFailure.nonFiniteNumber(key: key))
            }
            do {
                request.httpBody = try JSONEncoder.sortedKeys().encode(parameters)
            } catch {
                throw .parameterEncoding(error)
            }
            setContentTypeIfAbsent("application/json", on: &request)
        case .url(let options):
            let query: String
            do {
                query = try options.encode(parameters)
            } catch {
                throw .parameterEncoding(error)
            }
            if options.usesQueryString(for: method) {
                if let url = request.url {
                    request.url = try URLBuilder.url(url, appendingQuery: query)
                }
            } else {
                request.httpBody = Data(query.utf8)
                setContentTypeIfAbsent("application/x-www-form-urlencoded; charset=utf-8", on: &request)
            }
        }
    }

    static func appendQuery(_ parameters: Parameters, to request: inout URLRequest) throws(CourierError) {
        try encode(parameters, with: .queryString, method: .get, into: &request)
    }

    static func setContentTypeIfAbsent(_ value: String, on request: inout URLRequest) {
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue(value, forHTTPHeaderField: "Content-Type")
        }
    }
}
