import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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
        // Issue 29: the method is read (and uppercased) only when it decides something: for an
        // upload, or for a request with a body.
        switch task {
        case .uploadFile:
            try Endpoint.requireBody(
                for: HTTPMethod(rawValue: (request.httpMethod ?? "GET").uppercased()), what: "a file upload")
        case .uploadMultipart:
            try Endpoint.requireBody(
                for: HTTPMethod(rawValue: (request.httpMethod ?? "GET").uppercased()), what: "a multipart upload")
        default: break
        }
        guard !limits.allowsBodyInGETAndHEAD, !(request.httpBody?.isEmpty ?? true) || request.httpBodyStream != nil,
            let method = request.httpMethod?.uppercased(), method == "GET" || method == "HEAD"
        else { return }
        throw .requestMapping(
            "a \(method) request with a body is refused (servers and Apple's URLSession may drop it); "
                + "send it as POST, or set Limits.allowsBodyInGETAndHEAD for this target")
    }

    /// Throws ``CourierError/requestMapping(_:)`` when the request's own `Content-Length` is not
    /// a plain number of exactly the bytes its body holds (`0` without a body), or it names a
    /// `Transfer-Encoding` as well: the server would read another length than the one sent, and
    /// the bytes left over (or missing) would become part of the next request on the connection
    /// (request smuggling), or the request would wait for bytes that never come.
    /// `file`: the transfer's file body and its size (`nil` size: unknown, the transport checks it).
    static func validateContentLength(
        of request: URLRequest, file: (url: URL, size: UInt64?)?
    ) throws(CourierError) {
        // The fields are read once (issue 29: `value(forHTTPHeaderField:)` copied them out of the
        // request for each name it looked up), and every `Content-Length` field is seen, whatever
        // the case of its name: that lookup found one of two and let the other go out unchecked.
        guard let headers = request.allHTTPHeaderFields, !headers.isEmpty else { return }
        var announced: UInt64?
        var transferEncoding = false
        for (name, value) in headers {
            if ASCII.equalIgnoringCase(name, "Content-Length") {
                guard let length = HeaderNumber.plainLength(value).map(UInt64.init) else {
                    throw .requestMapping(
                        "the header Content-Length '\(value)' is not a number of bytes (ASCII digits only, no spaces)")
                }
                // Two fields (names differing in case) would both go on the wire: servers disagree on
                // which one counts, or refuse the request (nginx: 400).
                if announced != nil { throw .requestMapping("the request has two Content-Length headers") }
                announced = length
            } else if ASCII.equalIgnoringCase(name, "Transfer-Encoding") {
                transferEncoding = true
            }
        }
        guard let length = announced else { return }
        if transferEncoding {
            throw .requestMapping("a request cannot announce both Content-Length and Transfer-Encoding")
        }
        let actual: UInt64
        if let file {
            guard let size = file.size else { return }
            actual = size
        } else if request.httpBodyStream != nil {
            return  // A stream's length is the caller's to announce.
        } else {
            actual = UInt64(request.httpBody?.count ?? 0)
        }
        guard length == actual else {
            throw .requestMapping(
                "the header Content-Length says \(length) bytes but the body holds \(actual): remove the header "
                    + "(the transport sets it) or make it match")
        }
    }

    /// Throws ``CourierError/schemeNotAllowed(_:)`` unless `url` has an allowed scheme (and, for
    /// http and https, a host).
    static func validateDestination(_ url: URL?, limits: Limits) throws(CourierError) {
        guard let url else { throw .requestMapping("the request has no URL") }
        // Issue 29: read off the URL's text (which Foundation parsed already) with the rules of
        // `URLBuilder`, rather than through `URL.scheme` and `URL.host`, each of which builds a
        // string on Linux (2,500 instructions a check rather than 1,100; made twice a request on
        // URLSession). `BaseURLCheckTests` holds it to Foundation's answer.
        var text = url.absoluteString
        let (scheme, needsHost) = text.withUTF8 { bytes -> (String?, Bool) in
            guard let colon = URLBuilder.schemeEnd(bytes) else { return (nil, false) }
            let schemeBytes = UnsafeBufferPointer(rebasing: bytes[..<colon])
            // Schemes that start with "http" (in any case) need a host.
            let http = ASCII.hasPrefix(schemeBytes, lowercase: "http")
            return (ASCII.lowercasedString(schemeBytes), http && !URLBuilder.hasHost(bytes, schemeEnd: colon))
        }
        guard let scheme, isAllowed(scheme, in: limits.allowedSchemes) else { throw .schemeNotAllowed(url) }
        if needsHost {
            throw .requestMapping("'\(Redaction.url(url))' has no host")
        }
    }

    /// Whether `scheme` (lowercased) is one of `allowed` (lowercased by ``Limits``). A few schemes
    /// (the default is two) are compared one by one: a short scheme compares as one word, where
    /// hashing it for the set's lookup cost about 300 instructions, twice a request on the wire
    /// (issue 29).
    static func isAllowed(_ scheme: String, in allowed: Set<String>) -> Bool {
        guard allowed.count <= 4 else { return allowed.contains(scheme) }
        return allowed.contains { $0 == scheme }
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
