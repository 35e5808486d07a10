/// Case rules for protocol text read byte by byte: URL schemes and hosts, header names. HTTP and
/// RFC 3986 make them case-insensitive in ASCII only, so only A–Z and a–z are folded (no locale,
/// no Unicode case mapping, unlike `String.lowercased()`), and no `String` is built to compare.
enum ASCII {
    /// `byte` with A–Z mapped to a–z; every other byte unchanged.
    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }

    /// Whether `byte` is a letter, A–Z or a–z.
    @inline(__always)
    static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) &- UInt8(ascii: "a") < 26
    }

    /// The value of a hexadecimal digit (0–9, a–f, A–F), `nil` for any other byte.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Whether `byte` is a digit, 0–9.
    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    /// `bytes` as a string with A–Z lowercased.
    static func lowercasedString(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { out in
            for index in bytes.indices { out[index] = lowercased(bytes[index]) }
            return bytes.count
        }
    }

    /// Whether `bytes` starts with `lowercase` (written in lowercase), A–Z matching a–z.
    static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, lowercase: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        guard bytes.count >= expected.count else { return false }
        for index in expected.indices where lowercased(bytes[index]) != expected[index] { return false }
        return true
    }

    /// Whether `a` and `b` are equal but for the case of their letters.
    static func equalIgnoringCase(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        // Through each string's contiguous bytes (issue 29: zipping the two UTF-8 views was most
        // of a header lookup's cost); a string without them (bridged) is read through its view.
        let contiguous = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in equalIgnoringCase(x, y) }
        }
        if let contiguous, let equal = contiguous { return equal }
        return zip(a.utf8, b.utf8).allSatisfy { x, y in x == y || lowercased(x) == lowercased(y) }
    }

    /// Whether `a` and `b`, of the same length, are equal but for the case of their letters.
    @inline(__always)
    private static func equalIgnoringCase(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        for index in a.indices where a[index] != b[index] && lowercased(a[index]) != lowercased(b[index]) {
            return false
        }
        return true
    }
}

extension StringProtocol {
    /// The text without the whitespace at either end, read scalar by scalar as Foundation's
    /// `trimmingCharacters(in: .whitespaces)` reads header values (the tab, the Unicode space
    /// separators, category Zs, and U+200B; not line breaks, and a space with a combining mark
    /// after it loses only the space), without its bridge through `NSString` on Linux (issue 29: ~10,000
    /// instructions a call; a cache hit made several). Reading `Character`s instead trimmed a
    /// vertical tab or a line separator, and a space together with its combining mark (found by
    /// review), so `"a, \u{301}b"` and `"a,b"` gave one `Vary` digest.
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, Self.isTrimmed(scalars[start]) { start = scalars.index(after: start) }
        while start < end {
            let last = scalars.index(before: end)
            guard Self.isTrimmed(scalars[last]) else { break }
            end = last
        }
        return String(self[start..<end])
    }

    @inline(__always)
    private static func isTrimmed(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar == " " || scalar == "\t" }
        // U+200B ZERO WIDTH SPACE (category Cf) is in Foundation's set too (CoreFoundation's
        // `isWhitespace`: found by review).
        return scalar.value == 0x200B || scalar.properties.generalCategory == .spaceSeparator
    }
}

extension Substring {
    /// ``StringProtocol/trimmingWhitespace()``, as a slice: spaces and tabs are dropped as bytes, and
    /// only a text that then begins or ends with a non-ASCII scalar is read scalar by scalar (and
    /// copied into a new string). Issue 29: the cache reads its directives on every hit.
    func droppingWhitespace() -> Substring {
        let bytes = utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while start < end, isSpace(bytes[start]) { bytes.formIndex(after: &start) }
        while start < end {
            let last = bytes.index(before: end)
            guard isSpace(bytes[last]) else { break }
            end = last
        }
        // Only ASCII bytes were passed, so both ends fall on scalar boundaries.
        let trimmed = self[start..<end]
        guard start < end, bytes[start] >= 0x80 || bytes[bytes.index(before: end)] >= 0x80 else { return trimmed }
        return Substring(trimmed.trimmingWhitespace())
    }
}
