import Foundation

/// RFC 3986 percent-encoding over UTF-8 bytes.
enum PercentEncoding {
    /// Escapes everything but the unreserved characters `A–Z a–z 0–9 - . _ ~`.
    static func escape(_ string: String) -> String {
        encode(string) { isUnreserved($0) }
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// `pchar` without `%`: unreserved, sub-delims, `:` and `@`.
    static func isPathCharacter(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"),
            UInt8(ascii: "@"):
            return true
        default:
            return false
        }
    }

    /// `bytes` with each valid `%XX` escape decoded and every other byte as it is. Not
    /// `removingPercentEncoding`, which gives up on the whole string for one lone `%` or one escape
    /// that is not UTF-8: `%2e%2e/admin/100%` then passed the dot-segment check, and went out as
    /// `/%2e%2e/admin/100%25`, which servers that decode before resolving read as `..`; and a
    /// query name `user%5B%FF%5D%5Bpassword%5D` was not seen as `password` by redaction. Found by
    /// review.
    static func lenientlyDecoded(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let bytes = Array(bytes)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = ASCII.hexValue(bytes[index + 1]), let low = ASCII.hexValue(bytes[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return decoded
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// The uppercase hexadecimal digit for `value` (0–15).
    static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }

    /// Whether `%` at `index` starts a `%XX` escape.
    static func isEscape(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        index + 2 < bytes.count && isHexDigit(bytes[index + 1]) && isHexDigit(bytes[index + 2])
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default:
            false
        }
    }

    private static func encode(
        _ string: String, keepingEscapes: Bool = false, allowed: (UInt8) -> Bool
    ) -> String {
        let utf8 = string.utf8
        // Fast path: nothing to escape (the common case for keys, paths and simple values).
        if utf8.allSatisfy(allowed) { return string }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count * 3)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            if allowed(byte) {
                bytes.append(byte)
            } else if keepingEscapes, byte == UInt8(ascii: "%"), isEscape(utf8, at: index) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
            index = utf8.index(after: index)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `%` at `index` starts a `%XX` escape.
    private static func isEscape(_ utf8: String.UTF8View, at index: String.UTF8View.Index) -> Bool {
        let first = utf8.index(after: index)
        guard first != utf8.endIndex, isHexDigit(utf8[first]) else { return false }
        let second = utf8.index(after: first)
        return second != utf8.endIndex && isHexDigit(utf8[second])
    }
}
