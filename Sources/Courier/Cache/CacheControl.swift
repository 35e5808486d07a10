import Foundation

/// The `Cache-Control` directives the cache acts on (RFC 9111 §5.2), parsed from one header value.
/// Unknown directives are ignored; a malformed number makes its directive count as absent, except
/// `max-age`, which then counts as `0` (stale at once), the safe reading, as a `max-age` repeated
/// with another value does (a `stale-if-error` repeated with another value counts as `0`). A header
/// with more directives than ``maxDirectives`` is not read past that bound, and counts as
/// `no-store` and `no-cache`: a directive past the bound (a `no-store` after 64 others) must not be
/// missed. So does a header that ends inside a quoted string, whose quote hides what follows it.
struct CacheControl: Sendable, Hashable {
    var noStore = false
    var noCache = false
    var mustRevalidate = false
    var isPrivate = false
    var isPublic = false
    var maxAge: Int?
    /// Parsed but never used: Courier is a private cache, and `s-maxage` is for shared ones.
    var sharedMaxAge: Int?
    var staleIfError: Int?
    var onlyIfCached = false

    /// The most directives one header is read for: a hostile header cannot make parsing unbounded.
    static let maxDirectives = 64

    init(_ value: String?) {
        guard let value else { return }
        var staleIfErrorSeen = false
        var quoteLeftOpen = false
        let parts = Self.split(value, maxSplits: Self.maxDirectives, quoteLeftOpen: &quoteLeftOpen)
        if parts.count > Self.maxDirectives || quoteLeftOpen {
            // Hostile-header fix (issue 26): never store or reuse on the strength of a partial
            // reading. A quoted string left open hides every directive after its quote
            // (`max-age=86400, x="…, no-store`: found by review), so it is read the same way.
            noStore = true
            noCache = true
        }
        for part in parts.prefix(Self.maxDirectives) {
            let pieces = part.split(separator: "=", maxSplits: 1)
            let name = pieces.first.map { $0.trimmingWhitespace().lowercased() } ?? ""
            let argument = pieces.count > 1 ? Self.unquoted(pieces[1]) : nil
            switch name {
            case "no-store": noStore = true
            // `no-cache="field"` is read as plain `no-cache`: always revalidate, the strictest reading.
            case "no-cache": noCache = true
            case "must-revalidate", "proxy-revalidate": mustRevalidate = true
            case "private": isPrivate = true
            case "public": isPublic = true
            case "max-age":
                // Repeated with another value (two fields, or a proxy's added to the origin's):
                // stale, one of the two readings RFC 9111 §4.2.1 allows, and the safe one (the
                // last value won, so `max-age=0, max-age=86400` was fresh for a day).
                let value = argument.flatMap(Self.deltaSeconds) ?? 0
                maxAge = maxAge.map { $0 == value ? value : 0 } ?? value
            case "s-maxage": sharedMaxAge = argument.flatMap(Self.deltaSeconds)
            case "stale-if-error":
                // Repeated with another value (or a malformed one): `0`, no stale answer, the safe
                // reading, as for `max-age` (the last value won: `stale-if-error=60,
                // stale-if-error=86400` served a day-old answer after an error).
                let value = argument.flatMap(Self.deltaSeconds)
                staleIfError = staleIfErrorSeen ? (staleIfError == value ? value : 0) : value
                staleIfErrorSeen = true
            case "only-if-cached": onlyIfCached = true
            default: continue
            }
        }
    }

    /// The directives of `value`: split at the commas outside quoted strings (RFC 9110 §5.6.4), so
    /// `private="a, max-age=86400"` is one directive, not a `max-age`. At most `maxSplits` splits,
    /// as `split(separator:maxSplits:)` makes; empty members are left out.
    ///
    /// Read as UTF-8, every delimiter being ASCII (issue 29: stepping through `Character`s was
    /// ~12,000 instructions for `max-age=3600`, read on every cache hit), as a server reads the
    /// field: a `"` opens a quoted string even with a combining mark after it.
    static func split(_ value: String, maxSplits: Int) -> [Substring] {
        var quoteLeftOpen = false
        return split(value, maxSplits: maxSplits, quoteLeftOpen: &quoteLeftOpen)
    }

    /// ``split(_:maxSplits:)``, telling whether the value ends inside a quoted string.
    static func split(_ value: String, maxSplits: Int, quoteLeftOpen: inout Bool) -> [Substring] {
        var parts: [Substring] = []
        let bytes = value.utf8
        var start = bytes.startIndex
        var index = bytes.startIndex
        var quoted = false
        var escaped = false
        func add(_ part: Substring) {
            if !part.utf8.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { parts.append(part) }
        }
        while index < bytes.endIndex {
            let byte = bytes[index]
            if escaped {
                escaped = false
            } else if quoted, byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                quoted.toggle()
            } else if byte == UInt8(ascii: ","), !quoted {
                add(value[start..<index])
                start = bytes.index(after: index)
                if parts.count == maxSplits { break }
            }
            index = bytes.index(after: index)
        }
        quoteLeftOpen = quoted
        add(value[start...])
        return parts
    }

    private static func unquoted(_ text: Substring) -> String {
        var value = text.trimmingWhitespace()
        if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
            value = String(value.dropFirst().dropLast())
        }
        return value
    }

    /// The largest delta-seconds kept: larger values mean "for ever" (RFC 9111 §1.2.2).
    static let maxDeltaSeconds = 2_147_483_648

    /// A non-negative decimal (RFC 9111 §1.2.2); too large a value is capped, anything else is `nil`.
    static func deltaSeconds(_ text: String) -> Int? {
        let digits = text.trimmingWhitespace()
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        // Leading zeros and very long numbers: only the value matters, capped.
        var value = 0
        for byte in digits.utf8 {
            value = value * 10 + Int(byte - 0x30)
            if value >= maxDeltaSeconds { return maxDeltaSeconds }
        }
        return value
    }
}
