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
            // Split at the first `=` byte, as a server reads it (issue 29: splitting `Character`s
            // and lowercasing a new string made this ~8,900 instructions for `max-age=3600`, now
            // ~4,400, on every cache hit). An `=` with a combining mark after it is still the separator, so
            // `max-age=\u{301}60` is a malformed `max-age` (stale at once), not an unknown name.
            let equals = part.utf8.firstIndex(of: UInt8(ascii: "="))
            let name = (equals.map { part[..<$0] } ?? part).droppingWhitespace()
            let argument = equals.map { Self.unquoted(part[part.utf8.index(after: $0)...]) }
            guard let directive = Directive(name) else {
                // No name but an argument (`=no-store`): what it hides cannot be known, so it is
                // read as `no-store` and `no-cache`, as a quote left open is (found by review: the
                // argument was read as the name before, and skipping it made the answer fresh).
                if name.isEmpty, let argument, !argument.isEmpty {
                    noStore = true
                    noCache = true
                }
                continue
            }
            switch directive {
            case .noStore: noStore = true
            // `no-cache="field"` is read as plain `no-cache`: always revalidate, the strictest reading.
            case .noCache: noCache = true
            case .mustRevalidate, .proxyRevalidate: mustRevalidate = true
            case .isPrivate: isPrivate = true
            case .isPublic: isPublic = true
            case .maxAge:
                // Repeated with another value (two fields, or a proxy's added to the origin's):
                // stale, one of the two readings RFC 9111 §4.2.1 allows, and the safe one (the
                // last value won, so `max-age=0, max-age=86400` was fresh for a day).
                let value = argument.flatMap { Self.deltaSeconds($0) } ?? 0
                maxAge = maxAge.map { $0 == value ? value : 0 } ?? value
            case .sharedMaxAge: sharedMaxAge = argument.flatMap { Self.deltaSeconds($0) }
            case .staleIfError:
                // Repeated with another value (or a malformed one): `0`, no stale answer, the safe
                // reading, as for `max-age` (the last value won: `stale-if-error=60,
                // stale-if-error=86400` served a day-old answer after an error).
                let value = argument.flatMap { Self.deltaSeconds($0) }
                staleIfError = staleIfErrorSeen ? (staleIfError == value ? value : 0) : value
                staleIfErrorSeen = true
            case .onlyIfCached: onlyIfCached = true
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

    /// The argument without the whitespace around it and, when it is a quoted string, without its
    /// quotes (compared as bytes: only a number is ever read from it).
    private static func unquoted(_ text: Substring) -> Substring {
        let value = text.droppingWhitespace()
        let bytes = value.utf8
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else {
            return value
        }
        return value[bytes.index(after: bytes.startIndex)..<bytes.index(before: bytes.endIndex)]
    }

    /// The directives the cache acts on, matched by name without regard to ASCII case (a server
    /// compares them so; no other letter folds to one of theirs).
    private enum Directive {
        case noStore, noCache, mustRevalidate, proxyRevalidate, isPrivate, isPublic, maxAge, sharedMaxAge
        case staleIfError, onlyIfCached

        init?(_ name: Substring) {
            // `withUTF8` copies only a bridged string (a header from Foundation on Apple
            // platforms), which has no contiguous bytes.
            var name = name
            guard let found = name.withUTF8(Self.named) else { return nil }
            self = found
        }

        /// The directive `bytes` name, chosen by length first.
        private static func named(_ bytes: UnsafeBufferPointer<UInt8>) -> Directive? {
            func equals(_ name: StaticString) -> Bool {
                bytes.count == name.utf8CodeUnitCount && ASCII.hasPrefix(bytes, lowercase: name)
            }
            switch bytes.count {
            case 6: return equals("public") ? .isPublic : nil
            case 7: return equals("private") ? .isPrivate : equals("max-age") ? .maxAge : nil
            case 8:
                return equals("no-store")
                    ? .noStore : equals("no-cache") ? .noCache : equals("s-maxage") ? .sharedMaxAge : nil
            case 14: return equals("stale-if-error") ? .staleIfError : equals("only-if-cached") ? .onlyIfCached : nil
            case 15: return equals("must-revalidate") ? .mustRevalidate : nil
            case 16: return equals("proxy-revalidate") ? .proxyRevalidate : nil
            default: return nil
            }
        }
    }

    /// The largest delta-seconds kept: larger values mean "for ever" (RFC 9111 §1.2.2).
    static let maxDeltaSeconds = 2_147_483_648

    /// A non-negative decimal (RFC 9111 §1.2.2); too large a value is capped, anything else is `nil`.
    static func deltaSeconds(_ text: Substring) -> Int? {
        var digits = text.droppingWhitespace()
        return digits.withUTF8(deltaSeconds)
    }

    /// ``deltaSeconds(_:)`` of bytes already trimmed.
    private static func deltaSeconds(_ digits: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !digits.isEmpty else { return nil }
        // Leading zeros and very long numbers: only the value matters, capped (every byte is still
        // checked to be a digit).
        var value = 0
        for byte in digits {
            guard ASCII.isDigit(byte) else { return nil }
            if value < maxDeltaSeconds { value = value * 10 + Int(byte - 0x30) }
        }
        return min(value, maxDeltaSeconds)
    }
}
