import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Courier's rules for what goes on the wire, for transports that send and redirect themselves.
extension Transfer {
    /// Checks that the request may be sent: its URL has an allowed scheme
    /// (``Limits/allowedSchemes``) and, for http and https, a host. Call it before every hop,
    /// redirects included. A transfer the provider made, whose request it has just checked, passes
    /// at once until its ``request`` or ``limits`` change.
    /// - Throws: ``CourierError/schemeNotAllowed(_:)`` or ``CourierError/requestMapping(_:)``.
    public func checkDestination() throws(CourierError) {
        if destinationChecked { return }
        try RequestValidation.validateDestination(request.url, limits: limits)
    }

    /// For a file body, its size, checked as ``URLSessionTransport`` checks it: a regular, readable
    /// file whose size is real (a FIFO, a device, a directory or a `/proc` file is refused).
    /// `nil` for a body in the request. Send exactly this many bytes, and fail with
    /// ``FileBodyFailure/sizeChanged(_:expected:actual:)`` if the file turns out to hold another
    /// number while it is read.
    public func fileBodySize() throws(FileBodyFailure) -> UInt64? {
        guard case .file(let url) = body else { return nil }
        return try FileBody.regularFileSize(url)
    }

    /// The transfer that follows a redirect: Courier's redirect rules, in the one place they live.
    /// ``URLSessionTransport`` and `AsyncHTTPClientTransport` follow every redirect through it:
    ///
    /// - 301, 302, 303, 307 and 308 with a `Location` are followed (an empty `Location` is the same
    ///   URL, RFC 3986 §5.2); other statuses are answers.
    /// - 307 and 308 repeat the method and the body, a file body included (RFC 9110 §15.4.8);
    ///   303 becomes `GET` (but `HEAD` stays), and so does a `POST` answered with 301 or 302.
    ///   A request that becomes `GET` loses its body and its `Content-Type` and `Content-Length`.
    ///   A body stream (`httpBodyStream`, read by the first hop) cannot be repeated: such a hop
    ///   throws `URLError(.requestBodyStreamExhausted)`.
    /// - A hop to another origin (scheme, host or port) drops the credential headers,
    ///   ``Limits/credentialHeaders`` (`Authorization`, `Proxy-Authorization`, `Cookie`, API keys
    ///   and tokens by default).
    /// - Only allowed schemes are followed, and at most ``Limits/maxRedirects`` hops.
    /// - A hop from `https` to `http` is refused unless ``Limits/allowsInsecureRedirects``, and
    ///   always when it would carry a body.
    ///
    /// - Parameters:
    ///   - response: The response head that may be a redirect.
    ///   - redirects: The redirects this exchange followed before `response`.
    /// - Returns: The next hop, or `nil` when `response` is the answer.
    /// - Throws: ``CourierError/schemeNotAllowed(_:)`` for a hop to a scheme not allowed, and
    ///   ``CourierError/underlying(_:_:)`` with `URLError(.httpTooManyRedirects)` past the limit,
    ///   ``CourierError/insecureRedirect(_:)`` for a hop from `https` to `http` that is not allowed,
    ///   ``CourierError/underlying(_:_:)`` with `URLError(.requestBodyStreamExhausted)` for a hop
    ///   that would repeat a body stream.
    public func following(redirect response: Response, redirects: Int) throws(CourierError) -> Transfer? {
        let status = response.statusCode
        guard Redirects.statuses.contains(status),
            let location = response.value(forHTTPHeaderField: "Location"),
            let from = request.url
        else { return nil }
        guard let target = location.isEmpty ? from : URL(string: location, relativeTo: from)?.absoluteURL else {
            throw .underlying(URLError(.badServerResponse), nil)
        }
        guard limits.allows(target) else { throw .schemeNotAllowed(target) }
        guard redirects < limits.maxRedirects else { throw .underlying(URLError(.httpTooManyRedirects), nil) }
        var next = self
        next.destinationChecked = false  // a new hop, for the transport to check
        var nextRequest = request
        nextRequest.url = target
        let method = (request.httpMethod ?? "GET").uppercased()
        let becomesGet = (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST")
        if !becomesGet, request.httpBodyStream != nil {
            // The hop would repeat a body stream the first hop read to its end: an empty or cut
            // body would go out as if it were the request's (found by review). Foundation on
            // Apple platforms fails the same way without a delegate that gives a new stream.
            throw .underlying(URLError(.requestBodyStreamExhausted), nil)
        }
        if becomesGet {
            nextRequest.httpMethod = "GET"
            nextRequest.httpBody = nil
            nextRequest.httpBodyStream = nil
            // The fields that describe the dropped body go with it (RFC 9110 §15.4): a
            // `Content-Encoding: gzip` left on a GET makes a server that decodes request bodies
            // refuse it.
            for name in Redirects.contentFields { nextRequest.setValue(nil, forHTTPHeaderField: name) }
            next.body = .inRequest
        }
        let carriesBody = Redirects.carriesBody(nextRequest, file: next.body.fileURL)
        if let refusal = Redirects.insecureHop(from: from, to: target, carriesBody: carriesBody, limits: limits) {
            throw refusal
        }
        next.request = Redirects.strippingCredentials(nextRequest, from: from, headers: limits.credentialHeaders)
        return next
    }
}

extension Limits {
    /// Whether `url` uses an allowed scheme (``allowedSchemes``).
    public func allows(_ url: URL?) -> Bool {
        guard let scheme = url?.scheme?.lowercased() else { return false }
        return allowedSchemes.contains(scheme)
    }
}
