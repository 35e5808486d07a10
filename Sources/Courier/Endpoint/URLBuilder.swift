import Foundation

/// The URL rules for targets.
///
/// - An empty path returns the base URL unchanged (its query kept, no slash added).
/// - Otherwise the path is appended with exactly one `/` between base and path, whatever slashes
///   either side brings. Characters that cannot stand in a path are percent-encoded; existing `%XX`
///   escapes are kept.
/// - A `?` in the path starts a query: `"search?q=swift"` is sent as `/search?q=swift` (never as
///   `%3F`). It follows the base URL's own query; task parameters come after both.
/// - `#` in a path is data, sent as `%23`.
enum URLBuilder {
    static func url(baseURL: URL, path: String) throws(CourierError) -> URL {
        try validate(baseURL)
        if path.isEmpty { return baseURL }

        var (base, baseQuery, fragment) = split(baseURL.absoluteString)
        var pathPart = Substring(path)
        var pathQuery: Substring = ""
        if let mark = path.firstIndex(of: "?") {
            pathPart = path[..<mark]
            pathQuery = path[path.index(after: mark)...]
        }
        while pathPart.first == "/" { pathPart = pathPart.dropFirst() }

        if !pathPart.isEmpty {
            while base.last == "/" { base = base.dropLast() }
            base += "/" + PercentEncoding.escapePath(String(pathPart))
        }
        let query = join(baseQuery, Substring(PercentEncoding.escapeQuery(String(pathQuery))))
        let text = String(base) + (query.isEmpty ? "" : "?" + query) + fragment
        guard let url = URL(string: text) else {
            throw .requestMapping("'\(path)' appended to '\(baseURL.absoluteString)' is not a valid URL")
        }
        return url
    }

    /// Appends an already percent-encoded query to a URL, after any query it has.
    static func url(_ url: URL, appendingQuery query: String) throws(CourierError) -> URL {
        if query.isEmpty { return url }
        let (base, existing, fragment) = split(url.absoluteString)
        let text = String(base) + "?" + join(existing, Substring(query)) + fragment
        guard let result = URL(string: text) else {
            throw .requestMapping("the query '\(query)' does not fit '\(url.absoluteString)'")
        }
        return result
    }

    static func validate(_ baseURL: URL) throws(CourierError) {
        guard let scheme = baseURL.scheme, !scheme.isEmpty else {
            throw .requestMapping("'\(baseURL.absoluteString)' has no scheme (expected e.g. https://)")
        }
        let lowered = scheme.lowercased()
        if lowered == "http" || lowered == "https", (baseURL.host ?? "").isEmpty {
            throw .requestMapping("'\(baseURL.absoluteString)' has no host")
        }
    }

    /// Splits a URL string into the part before the query, the query, and the fragment with its `#`.
    private static func split(_ text: String) -> (Substring, Substring, String) {
        var rest = Substring(text)
        var fragment = ""
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[hash...])
            rest = rest[..<hash]
        }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        return (rest, query, fragment)
    }

    private static func join(_ first: Substring, _ second: Substring) -> String {
        if first.isEmpty { return String(second) }
        if second.isEmpty { return String(first) }
        return first + "&" + second
    }
}
