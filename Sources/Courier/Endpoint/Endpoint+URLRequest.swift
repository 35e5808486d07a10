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
                request.httpBody = try MultipartEncoder.encodeInMemory(form)
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

/// Checks of the request that actually goes on the wire, made after every stage that can change it
/// (request mapping, plugins' `prepare`, signing) and before anything is sent, so no method or
/// header can smuggle a second header or request (CR/LF injection).
enum RequestValidation {
    /// Throws ``CourierError/requestMapping(_:)`` for an invalid method, header name or value.
    static func validate(_ request: URLRequest) throws(CourierError) {
        if let method = request.httpMethod, !HTTPMethod(rawValue: method).isValidToken {
            throw .requestMapping("'\(method)' is not a valid HTTP method name")
        }
        guard let headers = request.allHTTPHeaderFields else { return }
        for (name, value) in headers {
            try HeaderValidation.validate(name: name, value: value)
        }
    }

    /// Throws ``CourierError/requestMapping(_:)`` for a `GET` or `HEAD` request that carries a body
    /// unless the limits allow it (``Limits/allowsBodyInGETAndHEAD``). File and multipart uploads
    /// (`task`, whose body is not in the request) with those methods or `TRACE` are refused
    /// whatever the limits, as when the request is built: here also when a plugin or the signing
    /// changed the method since.
    static func validateBody(of request: URLRequest, task: HTTPTask, limits: Limits) throws(CourierError) {
        let wireMethod = HTTPMethod(rawValue: (request.httpMethod ?? "GET").uppercased())
        switch task {
        case .uploadFile: try Endpoint.requireBody(for: wireMethod, what: "a file upload")
        case .uploadMultipart: try Endpoint.requireBody(for: wireMethod, what: "a multipart upload")
        default: break
        }
        guard !limits.allowsBodyInGETAndHEAD, request.httpBodyStream != nil || !(request.httpBody?.isEmpty ?? true),
            let method = request.httpMethod?.uppercased(), method == "GET" || method == "HEAD"
        else { return }
        throw .requestMapping(
            "a \(method) request with a body is refused (servers and Apple's URLSession may drop it); "
                + "send it as POST, or set Limits.allowsBodyInGETAndHEAD for this target")
    }

    /// Throws ``CourierError/schemeNotAllowed(_:)`` unless `url` has an allowed scheme (and, for
    /// http and https, a host).
    static func validateDestination(_ url: URL?, limits: Limits) throws(CourierError) {
        guard let url else { throw .requestMapping("the request has no URL") }
        // Each of `scheme` and `host` is read once: on Linux every read copies a string.
        guard let scheme = url.scheme?.lowercased(), limits.allowedSchemes.contains(scheme) else {
            throw .schemeNotAllowed(url)
        }
        if scheme.hasPrefix("http"), url.host?.isEmpty ?? true {
            throw .requestMapping("'\(Redaction.url(url))' has no host")
        }
    }
}

/// Header checks made before anything is sent, so a header cannot smuggle a second header or
/// request (CR/LF injection).
enum HeaderValidation {
    static func validate(name: String, value: String) throws(CourierError) {
        guard !name.isEmpty, name.utf8.allSatisfy(HTTPToken.isTokenByte) else {
            throw .requestMapping("'\(name)' is not a valid header name")
        }
        // field-value: visible ASCII, obs-text, space and tab; never CR, LF or NUL.
        guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
            throw .requestMapping("the value of header '\(name)' contains a control character (only tab is allowed)")
        }
    }
}
