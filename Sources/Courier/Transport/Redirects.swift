import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The pieces of ``Transfer/following(redirect:redirects:)``, the one place redirects are decided
/// (every transport follows them through it). The hop limit is ``Limits/maxRedirects``.
enum Redirects {
    /// The statuses that are redirects Courier follows.
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The header fields that describe a request's body, removed with it when a redirect turns
    /// the request into a GET (RFC 9110 §15.4, and the digests of RFC 9530).
    static let contentFields = [
        "Content-Type", "Content-Length", "Content-Encoding", "Content-Language", "Content-Location",
        "Digest", "Content-Digest", "Repr-Digest", "Transfer-Encoding", "Last-Modified",
    ]

    /// Whether a head with this status and `Location` is a hop (followed, or refused with an
    /// error), not an answer: one of ``statuses`` with a `Location`.
    static func isHop(status: Int, location: @autoclosure () -> String?) -> Bool {
        statuses.contains(status) && location() != nil
    }

    /// The refusal of a hop from `https` to `http`: always when it would carry a body, otherwise
    /// unless ``Limits/allowsInsecureRedirects``. `nil` for any other hop. (Credentials never
    /// follow it: a change of scheme is a change of origin, see ``strippingCredentials(_:from:headers:)``.)
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

    /// Removes the credential headers (``Limits/credentialHeaders``, compared without case) when
    /// `request` leaves the origin of `from`.
    static func strippingCredentials(_ request: URLRequest, from: URL?, headers: Set<String>) -> URLRequest {
        guard let from, let to = request.url, !sameOrigin(from, to), let fields = request.allHTTPHeaderFields
        else { return request }
        var stripped = request
        for name in fields.keys where headers.contains(where: { ASCII.equalIgnoringCase($0, name) }) {
            stripped.setValue(nil, forHTTPHeaderField: name)
        }
        return stripped
    }
}
