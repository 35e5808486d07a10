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
/// - A path never leaves the base URL's path: a segment that is `.` or `..` (also percent-encoded,
///   or next to a backslash) is refused, since servers resolve it.
enum URLBuilder {
    // Delimiters are ASCII, so scanning is done on UTF-8 bytes: their indices are valid String
    // indices, and no grapheme breaking is needed (this runs for every request).
    private static let slash = UInt8(ascii: "/")
    private static let question = UInt8(ascii: "?")
    private static let hash = UInt8(ascii: "#")

    static func url(baseURL: URL, path: String) throws(CourierError) -> URL {
        let absolute = baseURL.absoluteString
        try validate(absolute)
        if path.isEmpty { return baseURL }

        let (base, baseQuery, fragment) = split(absolute)
        var pathPart = Substring(path)
        var pathQuery: Substring = ""
        if let mark = path.utf8.firstIndex(of: question) {
            pathPart = path[..<mark]
            pathQuery = path[path.utf8.index(after: mark)...]
        }
        pathPart = pathPart.drop { $0 == "/" }
        if containsDotSegment(pathPart) {
            throw .requestMapping("the path '\(path)' has a '.' or '..' segment, which would leave the base URL's path")
        }

        let escapedQuery = pathQuery.isEmpty ? "" : PercentEncoding.escapeQuery(String(pathQuery))
        var text = ""
        // One allocation for the whole URL (appending to a copy of the base reallocated it).
        text.reserveCapacity(
            base.utf8.count + 1 + pathPart.utf8.count * 3 + 1 + baseQuery.utf8.count + 1 + escapedQuery.utf8.count
                + fragment.utf8.count)
        text += base
        if !pathPart.isEmpty {
            while text.utf8.last == slash { text.removeLast() }
            text += "/"
            text += PercentEncoding.escapePath(String(pathPart))
        }
        let query = join(baseQuery, Substring(escapedQuery))
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

    /// Checks that a base URL (its `absoluteString`) has a scheme and, for http and https, a host.
    ///
    /// Read off the text the URL was parsed from, rather than through `URL.scheme` and `URL.host`,
    /// which parse it again (5% of a stubbed request's time). The rules are RFC 3986's, as
    /// Foundation's: the scheme is what precedes the first `:` when it is a valid scheme; the host
    /// is the authority after `//` without user info and port.
    static func validate(_ absolute: String) throws(CourierError) {
        let problem =
            absolute.utf8.withContiguousStorageIfAvailable(baseURLProblem)
            ?? Array(absolute.utf8).withUnsafeBufferPointer(baseURLProblem)
        switch problem {
        case nil: return
        case .noScheme?:
            throw .requestMapping("'\(Redaction.string(absolute))' has no scheme (expected e.g. https://)")
        case .noHost?:
            throw .requestMapping("'\(Redaction.string(absolute))' has no host")
        }
    }

    enum BaseURLProblem {
        case noScheme, noHost
    }

    private static func baseURLProblem(_ bytes: UnsafeBufferPointer<UInt8>) -> BaseURLProblem? {
        // The scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ":".
        var colon = 0
        while colon < bytes.count, bytes[colon] != UInt8(ascii: ":") {
            let byte = bytes[colon]
            let letter = byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")
            let other =
                (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            guard letter || (colon > 0 && other) else { return .noScheme }
            colon += 1
        }
        guard colon > 0, colon < bytes.count else { return .noScheme }
        // Only http and https (in any case) need a host.
        guard colon == 4 || colon == 5 else { return nil }
        for (offset, expected) in "https".utf8.prefix(colon).enumerated() where bytes[offset] | 0x20 != expected {
            return nil
        }
        var start = colon + 1
        guard start + 1 < bytes.count, bytes[start] == slash, bytes[start + 1] == slash else { return .noHost }
        start += 2
        var end = start
        while end < bytes.count, bytes[end] != slash, bytes[end] != question, bytes[end] != hash { end += 1 }
        // User info ends at the authority's last "@".
        var host = start
        for index in start..<end where bytes[index] == UInt8(ascii: "@") { host = index + 1 }
        if host < end, bytes[host] == UInt8(ascii: "[") {
            // An IP literal: something inside the brackets.
            return end - host > 2 ? nil : .noHost
        }
        var hostEnd = host
        while hostEnd < end, bytes[hostEnd] != UInt8(ascii: ":") { hostEnd += 1 }
        return hostEnd > host ? nil : .noHost
    }

    /// Whether a segment of `path` is `.` or `..`, as written or once percent-decoded, with `/` or
    /// `\\` as separators (some servers treat a backslash as a slash). Only paths with a `.` pay for
    /// the full check.
    static func containsDotSegment(_ path: Substring) -> Bool {
        let hasPercent = path.utf8.contains(UInt8(ascii: "%"))
        guard hasPercent || path.utf8.contains(UInt8(ascii: ".")) else { return false }
        if hasDotSegment(path.utf8) { return true }
        // Foundation's percent-decoding is slow on Linux: only for paths that have a `%`.
        guard hasPercent, let decoded = String(path).removingPercentEncoding else { return false }
        return hasDotSegment(decoded.utf8)
    }

    /// Whether a `/`- or `\`-separated segment of `bytes` is `.` or `..`.
    private static func hasDotSegment(_ bytes: some Sequence<UInt8>) -> Bool {
        var length = 0
        var onlyDots = true
        for byte in bytes {
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "\\") {
                if length > 0, length <= 2, onlyDots { return true }
                length = 0
                onlyDots = true
            } else {
                length += 1
                if byte != UInt8(ascii: ".") { onlyDots = false }
            }
        }
        return length > 0 && length <= 2 && onlyDots
    }

    /// Splits a URL string into the part before the query, the query, and the fragment with its `#`.
    private static func split(_ text: String) -> (Substring, Substring, Substring) {
        // Byte offsets from one pass over contiguous UTF-8 (the generic index walk cost 2% of a
        // stubbed request); the delimiters are ASCII, so the offsets fall on character boundaries.
        let (question, hash) =
            text.utf8.withContiguousStorageIfAvailable(delimiters)
            ?? Array(text.utf8).withUnsafeBufferPointer(delimiters)
        let utf8 = text.utf8
        let end = hash.map { utf8.index(utf8.startIndex, offsetBy: $0) } ?? utf8.endIndex
        let fragment = text[end...]
        guard let question else { return (text[..<end], "", fragment) }
        let mark = utf8.index(utf8.startIndex, offsetBy: question)
        return (text[..<mark], text[utf8.index(after: mark)..<end], fragment)
    }

    /// The offsets of the first `#`, and of the first `?` before it.
    private static func delimiters(_ bytes: UnsafeBufferPointer<UInt8>) -> (question: Int?, hash: Int?) {
        var question: Int?
        for offset in bytes.indices {
            switch bytes[offset] {
            case hash: return (question, offset)
            case URLBuilder.question where question == nil: question = offset
            default: continue
            }
        }
        return (question, nil)
    }

    private static func join(_ first: Substring, _ second: Substring) -> String {
        if first.isEmpty { return String(second) }
        if second.isEmpty { return String(first) }
        return first + "&" + second
    }
}
