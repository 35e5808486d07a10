import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a ``ReplayTransport`` finds a request's recorded answer. The method and the URL always
/// count: scheme, host (any case), port and path exactly, query items as a set (their order does
/// not matter), the fragment not at all. Both sides are compared after ``FixtureRedaction``.
///
/// When several recorded exchanges match, they answer in the order recorded, one per request,
/// and the last answers again once all were used: a recorded `503` then `200` replays as such.
public struct ReplayMatching: Sendable {
    /// How request bodies are compared.
    public enum Body: Sendable {
        /// Not compared.
        case ignored
        /// The same bytes.
        case exact
        /// The same JSON (key order and white space aside) when both bodies are JSON; the same
        /// bytes otherwise.
        case json
    }

    /// Headers (any case) whose values must be equal; a header missing on both sides is equal.
    /// Default: none.
    public var headers: [String]
    /// How bodies are compared. Default: ``Body/json``.
    public var body: Body
    /// A further condition, given the live request and the recorded one (both redacted; the
    /// recorded one with its headers and body). Default: `nil`.
    public var predicate: (@Sendable (_ live: URLRequest, _ recorded: URLRequest) -> Bool)?

    /// Creates a way of matching; every parameter has the default documented on its property.
    public init(
        headers: [String] = [], body: Body = .json,
        predicate: (@Sendable (_ live: URLRequest, _ recorded: URLRequest) -> Bool)? = nil
    ) {
        self.headers = headers
        self.body = body
        self.predicate = predicate
    }

    /// Method, URL (query in any order) and JSON-equal bodies.
    public static let `default` = ReplayMatching()

    /// What differs between a live request and a recorded one, described; empty when they match.
    func differences(_ live: URLRequest, _ recorded: URLRequest) -> [String] {
        var differences: [String] = []
        if (live.httpMethod ?? "GET") != (recorded.httpMethod ?? "GET") {
            differences.append("method \(recorded.httpMethod ?? "GET")")
        }
        if let left = live.url, let right = recorded.url {
            let (liveKey, recordedKey) = (URLKey(left), URLKey(right))
            if liveKey.location != recordedKey.location { differences.append("URL \(recordedKey.location)") }
            if !liveKey.sameQuery(as: recordedKey) {
                differences.append("query \(recordedKey.query.map { "\($0.0)=\($0.1 ?? "")" }.joined(separator: "&"))")
            }
        } else if live.url != recorded.url {
            differences.append("URL")
        }
        for name in headers
        where live.value(forHTTPHeaderField: name) != recorded.value(forHTTPHeaderField: name) {
            differences.append("header \(name)")
        }
        let (liveBody, recordedBody) = (live.httpBody ?? Data(), recorded.httpBody ?? Data())
        switch body {
        case .ignored:
            break
        case .exact:
            if liveBody != recordedBody { differences.append("body") }
        case .json:
            if liveBody != recordedBody && !JSONValue.equal(liveBody, recordedBody) { differences.append("body") }
        }
        if let predicate, differences.isEmpty, !predicate(live, recorded) { differences.append("predicate") }
        return differences
    }
}

/// A URL as matching sees it: where it points, and its query items as a sorted list.
struct URLKey: Equatable {
    let location: String
    let query: [(String, String?)]

    init(_ url: URL) {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let scheme = components?.scheme?.lowercased() ?? ""
        let host = components?.host?.lowercased() ?? ""
        let port = components?.port.map { ":\($0)" } ?? ""
        location = "\(scheme)://\(host)\(port)\(components?.percentEncodedPath ?? url.path)"
        query = (components?.queryItems ?? []).map { ($0.name, $0.value) }.sorted {
            ($0.0, $0.1 ?? "") < ($1.0, $1.1 ?? "")
        }
    }

    func sameQuery(as other: URLKey) -> Bool {
        query.elementsEqual(other.query) { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    static func == (lhs: URLKey, rhs: URLKey) -> Bool {
        lhs.location == rhs.location && lhs.sameQuery(as: rhs)
    }
}
