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
    // Delimiters are ASCII, so scanning is done on UTF-8 bytes: their indices are valid String
    // indices, and no grapheme breaking is needed (this runs for every request).
    private static let slash = UInt8(ascii: "/")
    private static let question = UInt8(ascii: "?")
    private static let hash = UInt8(ascii: "#")

    static func url(baseURL: URL, path: String) throws(CourierError) -> URL {
        try validate(baseURL)
        if path.isEmpty { return baseURL }

        let (base, baseQuery, fragment) = split(baseURL.absoluteString)
        var pathPart = Substring(path)
        var pathQuery: Substring = ""
        if let mark = path.utf8.firstIndex(of: question) {
            pathPart = path[..<mark]
            pathQuery = path[path.utf8.index(after: mark)...]
        }
        pathPart = pathPart.drop { $0 == "/" }

        var text = String(base)
        if !pathPart.isEmpty {
            while text.utf8.last == slash { text.removeLast() }
            text += "/"
            text += PercentEncoding.escapePath(String(pathPart))
        }
        let query = join(baseQuery, pathQuery.isEmpty ? "" : Substring(PercentEncoding.escapeQuery(String(pathQuery))))
        if !query.isEmpty {
            text += "?"
            text += query
        }
        text += fragment
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
        if isHTTP(scheme), (baseURL.host ?? "").isEmpty {
            throw .requestMapping("'\(baseURL.absoluteString)' has no host")
        }
    }

    /// `http` or `https`, in any case.
    private static func isHTTP(_ scheme: String) -> Bool {
        let bytes = scheme.utf8
        guard bytes.count == 4 || bytes.count == 5 else { return false }
        for (byte, expected) in zip(bytes, "https".utf8) where byte | 0x20 != expected {
            return false
        }
        return true
    }

    /// Splits a URL string into the part before the query, the query, and the fragment with its `#`.
    private static func split(_ text: String) -> (Substring, Substring, Substring) {
        var rest = Substring(text)
        var fragment: Substring = ""
        if let mark = rest.utf8.firstIndex(of: hash) {
            fragment = rest[mark...]
            rest = rest[..<mark]
        }
        var query: Substring = ""
        if let mark = rest.utf8.firstIndex(of: question) {
            query = rest[rest.utf8.index(after: mark)...]
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
