import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Decides which requests a ``StubTransport`` route answers (and which requests a verification
/// counts): conditions on the method, path, host, query items, headers and body, joined with `&&`.
///
/// ```swift
/// transport.on(
///     .method(.post) && .path("v2/search") && .query(["page": "2"])
///         && .header("Accept", "application/json") && .jsonBody(Search(term: "swift")),
///     .json(results))
/// ```
///
/// Every condition describes itself, so a request that matches no route is reported with the
/// routes that came closest and the conditions each of them missed.
public struct RequestMatcher: Sendable, CustomStringConvertible {
    struct Condition: Sendable {
        let description: String
        let test: @Sendable (URLRequest) -> Bool
    }

    let conditions: [Condition]

    init(_ description: String, _ test: @escaping @Sendable (URLRequest) -> Bool) {
        conditions = [Condition(description: description, test: test)]
    }

    private init(conditions: [Condition]) {
        self.conditions = conditions
    }

    /// The conditions, joined with `&&`.
    public var description: String {
        conditions.isEmpty ? "any request" : conditions.map(\.description).joined(separator: " && ")
    }

    /// Whether `request` meets every condition. The body is `request.httpBody` (a file body has
    /// been read into it by the time a ``StubTransport`` asks).
    public func matches(_ request: URLRequest) -> Bool {
        conditions.allSatisfy { $0.test(request) }
    }

    /// The conditions `request` does not meet, described.
    func missed(by request: URLRequest) -> [String] {
        conditions.filter { !$0.test(request) }.map(\.description)
    }

    /// Both matchers' conditions: a request must meet all of them.
    public static func && (lhs: RequestMatcher, rhs: RequestMatcher) -> RequestMatcher {
        RequestMatcher(conditions: lhs.conditions + rhs.conditions)
    }

    /// Every request.
    public static var any: RequestMatcher { RequestMatcher(conditions: []) }

    /// Requests with this method.
    public static func method(_ method: HTTPMethod) -> RequestMatcher {
        RequestMatcher("method \(method.rawValue)") { $0.httpMethod == method.rawValue }
    }

    /// Requests whose URL path (without its leading `/`) matches `pattern`: `*` matches one
    /// segment and `**` any number of segments (none included), anywhere in the path.
    public static func path(_ pattern: String) -> RequestMatcher {
        let segments = PathPattern.segments(pattern)
        return RequestMatcher("path \(pattern)") { request in
            PathPattern.matches(segments, PathPattern.segments(request.url?.path ?? ""))
        }
    }

    /// Requests to this host (compared without regard to case).
    public static func host(_ host: String) -> RequestMatcher {
        let host = host.lowercased()
        return RequestMatcher("host \(host)") { $0.url?.host?.lowercased() == host }
    }

    /// Requests whose query has every one of these items with these values, in any order; other
    /// items may be there too. Names and values are compared after percent-decoding.
    public static func query(_ items: [String: String]) -> RequestMatcher {
        let wanted = items.sorted { $0.key < $1.key }
        let text = wanted.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        return RequestMatcher("query \(text)") { request in
            let present = QueryItems.of(request.url)
            return wanted.allSatisfy { item in present.contains { $0.name == item.key && $0.value == item.value } }
        }
    }

    /// Requests whose query has an item named `name` (with `value`, or with any value when `value`
    /// is `nil`).
    public static func queryItem(_ name: String, _ value: String? = nil) -> RequestMatcher {
        RequestMatcher("query item \(name)\(value.map { "=\($0)" } ?? "")") { request in
            QueryItems.of(request.url).contains { $0.name == name && (value == nil || $0.value == value) }
        }
    }

    /// Requests with this header (the name compared without regard to case), with `value` or,
    /// when `value` is `nil`, any value.
    public static func header(_ name: String, _ value: String? = nil) -> RequestMatcher {
        RequestMatcher("header \(name)\(value.map { ": \($0)" } ?? "")") { request in
            guard let present = request.value(forHTTPHeaderField: name) else { return false }
            return value == nil || present == value
        }
    }

    /// Requests whose body is exactly these bytes.
    public static func body(_ data: Data) -> RequestMatcher {
        RequestMatcher("body of \(data.count) bytes") { ($0.httpBody ?? Data()) == data }
    }

    /// Requests whose body is JSON equal to `value` encoded: the same members and elements,
    /// whatever the key order and white space; `1` equals `1.0`.
    /// - Parameters:
    ///   - value: The expected body, as it encodes.
    ///   - encoder: Encodes `value`. Default: `JSONEncoder()`.
    public static func jsonBody(
        _ value: some Encodable & Sendable, encoder: JSONEncoder = JSONEncoder()
    ) -> RequestMatcher {
        let expected = (try? encoder.encode(value)).flatMap(JSONValue.parse)
        let text = (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "\(value)"
        return RequestMatcher("JSON body \(text)") { request in
            guard let expected, let body = request.httpBody, let actual = JSONValue.parse(body) else { return false }
            return actual == expected
        }
    }

    /// Requests for which `test` returns `true`.
    /// - Parameters:
    ///   - description: How failures name this condition. Default: `"predicate"`.
    ///   - test: The condition.
    public static func predicate(
        _ description: String = "predicate", _ test: @escaping @Sendable (URLRequest) -> Bool
    ) -> RequestMatcher {
        RequestMatcher(description, test)
    }
}

/// Paths with `*` (one segment) and `**` (any number of segments, none included), anywhere in
/// the pattern: `users/**/avatar` matches `users/avatar` and `users/1/photos/avatar`, and never
/// `users/1/profile` (segments after `**` are matched, not ignored).
enum PathPattern {
    static func segments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    static func matches(_ pattern: [Substring], _ path: [Substring]) -> Bool {
        // reachable[j]: the pattern read so far matches the first j segments of the path. One
        // pass per pattern segment: no backtracking, however many `**` a pattern has.
        var reachable = [Bool](repeating: false, count: path.count + 1)
        reachable[0] = true
        for segment in pattern {
            var next = [Bool](repeating: false, count: path.count + 1)
            if segment == "**" {
                var any = false
                for j in 0...path.count {
                    any = any || reachable[j]
                    next[j] = any
                }
            } else {
                for j in 0..<path.count where reachable[j] && (segment == "*" || segment == path[j]) {
                    next[j + 1] = true
                }
            }
            reachable = next
        }
        return reachable[path.count]
    }
}

/// A URL's query items, percent-decoded.
enum QueryItems {
    static func of(_ url: URL?) -> [(name: String, value: String?)] {
        guard let url, let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems else {
            return []
        }
        return items.map { ($0.name, $0.value) }
    }
}
