import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Rules for following redirects safely.
enum Redirects {
    /// FoundationNetworking's own limit for the redirects it follows; Courier applies the same to
    /// the 307/308 redirects it re-sends itself.
    static let maxHops = 20

    /// Headers that carry credentials and must not follow a redirect to another origin.
    static let credentialHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// Statuses whose redirect must repeat the method and body (RFC 9110 §15.4.8, §15.4.9).
    /// FoundationNetworking keeps the method but sends an empty body, so Courier re-sends these.
    static func repeatsBody(_ statusCode: Int) -> Bool {
        statusCode == 307 || statusCode == 308
    }

    /// The target of a redirect response whose `Location` uses a scheme the limits do not allow.
    static func disallowedLocation(of response: Response, limits: Limits) -> URL? {
        guard (300..<400).contains(response.statusCode), response.statusCode != 304,
            let location = response.value(forHTTPHeaderField: "Location"), !location.isEmpty,
            let target = URL(string: location, relativeTo: response.request?.url)?.absoluteURL,
            !limits.allows(target)
        else { return nil }
        return target
    }

    /// The refusal of a hop from `https` to `http`: always when it would carry a body, otherwise
    /// unless ``Limits/allowsInsecureRedirects``. `nil` for any other hop. (Credentials never
    /// follow it: a change of scheme is a change of origin, see ``strippingCredentials(_:from:)``.)
    static func insecureHop(from: URL?, to: URL?, carriesBody: Bool, limits: Limits) -> CourierError? {
        guard let to, from?.scheme?.lowercased() == "https", to.scheme?.lowercased() == "http" else { return nil }
        if limits.allowsInsecureRedirects && !carriesBody { return nil }
        return .insecureRedirect(to)
    }

    /// Whether `request` (or the transfer's file) has a body to send.
    static func carriesBody(_ request: URLRequest, file: URL? = nil) -> Bool {
        file != nil || !(request.httpBody?.isEmpty ?? true) || request.httpBodyStream != nil
    }

    /// Same scheme, host and port (default ports filled in).
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int) {
            let scheme = (url.scheme ?? "").lowercased()
            let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
            return (scheme, (url.host ?? "").lowercased(), port)
        }
        return origin(a) == origin(b)
    }

    /// Removes credentials when a redirect leaves the origin of `from`.
    static func strippingCredentials(_ request: URLRequest, from: URL?) -> URLRequest {
        guard let from, let to = request.url, !sameOrigin(from, to) else { return request }
        var stripped = request
        for header in credentialHeaders { stripped.setValue(nil, forHTTPHeaderField: header) }
        return stripped
    }
}
