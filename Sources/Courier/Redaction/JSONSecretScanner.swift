/// Finds the values of secret JSON members in text without decoding it, so redaction replaces
/// only those bytes and leaves the rest — big numbers, white space, escapes, key order — as it
/// was.
///
/// It is a tokenizer, not a validator: a string followed by `:` is a member name, and when the
/// name is secret the value after it (a string, a number or literal, or a whole object or array)
/// is replaced. So it also works on JSON cut short, on NDJSON, and on Server-Sent Events whose
/// `data:` lines hold JSON. A string ends at its closing quote or at a line break (JSON strings
/// hold none), so one bad line does not hide the members of the next. JSON held as text in a
/// string value (`"payload": "{\"token\": \"…\"}"`) is scanned too, to ``maxNesting`` levels.
/// Linear in the input at each level.
struct JSONSecretScanner {
    let bytes: [UInt8]
    let span: Range<Int>
    /// The placeholder as a JSON string, quoted and escaped.
    let placeholder: [UInt8]
    private let rawPlaceholder: [UInt8]
    private let depth: Int
    let isSecret: (String) -> Bool

    /// How deep JSON inside strings is scanned: JSON in a string in a string in a string.
    static let maxNesting = 3

    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")
    private static let newline: UInt8 = 0x0A

    init(
        bytes: [UInt8], span: Range<Int>, placeholder: [UInt8], depth: Int = 0, isSecret: @escaping (String) -> Bool
    ) {
        self.bytes = bytes
        self.span = span
        self.rawPlaceholder = placeholder
        self.placeholder = [Self.quote] + Self.escaped(placeholder) + [Self.quote]
        self.depth = depth
        self.isSecret = isSecret
    }

    /// `text` as the inside of a JSON string: quotes, backslashes and line breaks escaped.
    private static func escaped(_ text: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        for byte in text {
            switch byte {
            case quote, backslash: result += [backslash, byte]
            case newline: result += [backslash, UInt8(ascii: "n")]
            case 0x0D: result += [backslash, UInt8(ascii: "r")]
            default: result.append(byte)
            }
        }
        return result
    }

    /// The replacements, in order.
    mutating func edits() -> [RedactionEdit] {
        var edits: [RedactionEdit] = []
        var index = span.lowerBound
        while index < span.upperBound {
            guard bytes[index] == Self.quote else {
                index += 1
                continue
            }
            let (end, closed) = stringEnd(from: index)
            guard closed else {
                index = end
                continue
            }
            let colon = skipSpace(from: end)
            let isName = colon < span.upperBound && bytes[colon] == UInt8(ascii: ":")
            guard isName, isSecret(Self.decode(bytes[(index + 1)..<(end - 1)])) else {
                if !isName, depth < Self.maxNesting, bytes[(index + 1)..<(end - 1)].contains(Self.backslash) {
                    edits += nestedEdits(in: (index + 1)..<(end - 1))
                }
                index = end
                continue
            }
            let valueStart = skipSpace(from: colon + 1)
            let valueEnd = self.valueEnd(from: valueStart)
            if valueEnd > valueStart {
                edits.append(RedactionEdit(range: valueStart..<valueEnd, replacement: placeholder))
            }
            index = max(valueEnd, colon + 1)
        }
        return edits
    }

    /// The secrets of JSON held as text inside the string whose contents are at `content`: the
    /// contents are unescaped, scanned, and each replacement is put back escaped.
    private func nestedEdits(in content: Range<Int>) -> [RedactionEdit] {
        var text: [UInt8] = []
        // For each byte of `text`, the bytes of the string it came from.
        var origin: [Range<Int>] = []
        var index = content.lowerBound
        while index < content.upperBound {
            guard bytes[index] == Self.backslash, index + 1 < content.upperBound else {
                text.append(bytes[index])
                origin.append(index..<(index + 1))
                index += 1
                continue
            }
            let escape = bytes[index + 1]
            if escape == UInt8(ascii: "u"), index + 6 <= content.upperBound,
                let code = UInt32(String(decoding: bytes[(index + 2)..<(index + 6)], as: UTF8.self), radix: 16)
            {
                let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                for byte in String(scalar).utf8 {
                    text.append(byte)
                    origin.append(index..<(index + 6))
                }
                index += 6
                continue
            }
            let decoded: UInt8
            switch escape {
            case UInt8(ascii: "n"): decoded = Self.newline
            case UInt8(ascii: "t"): decoded = 0x09
            case UInt8(ascii: "r"): decoded = 0x0D
            case UInt8(ascii: "b"): decoded = 0x08
            case UInt8(ascii: "f"): decoded = 0x0C
            default: decoded = escape
            }
            text.append(decoded)
            origin.append(index..<(index + 2))
            index += 2
        }
        var inner = JSONSecretScanner(
            bytes: text, span: 0..<text.count, placeholder: rawPlaceholder, depth: depth + 1, isSecret: isSecret)
        return inner.edits().compactMap { edit in
            guard !edit.range.isEmpty else { return nil }
            let range = origin[edit.range.lowerBound].lowerBound..<origin[edit.range.upperBound - 1].upperBound
            return RedactionEdit(range: range, replacement: Self.escaped(edit.replacement))
        }
    }

    /// After the string that starts at `start`: the index past its closing quote and `true`, or
    /// the line break or end where it stopped and `false`.
    private func stringEnd(from start: Int) -> (Int, Bool) {
        var index = start + 1
        while index < span.upperBound {
            switch bytes[index] {
            case Self.quote: return (index + 1, true)
            case Self.newline: return (index, false)
            case Self.backslash: index += 2
            default: index += 1
            }
        }
        return (span.upperBound, false)
    }

    private func skipSpace(from start: Int) -> Int {
        var index = start
        while index < span.upperBound, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index
    }

    /// The end of the value that starts at `start`: a string, an object or array (to its matching
    /// bracket, or the end of the text when cut short), or a scalar up to the next delimiter.
    private func valueEnd(from start: Int) -> Int {
        guard start < span.upperBound else { return start }
        switch bytes[start] {
        case Self.quote:
            return stringEnd(from: start).0
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < span.upperBound {
                switch bytes[index] {
                case Self.quote:
                    let (end, closed) = stringEnd(from: index)
                    index = closed ? end : end + 1
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default:
                    break
                }
                index += 1
            }
            return span.upperBound
        default:
            var index = start
            let stops: [UInt8] = [UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D]
            while index < span.upperBound, !stops.contains(bytes[index]) { index += 1 }
            return index
        }
    }

    /// A member name's text, escapes decoded (`"pass\u0077ord"` is `password`).
    static func decode(_ raw: ArraySlice<UInt8>) -> String {
        guard raw.contains(backslash) else { return String(decoding: raw, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        var bytes: [UInt8] = []
        var index = raw.startIndex
        func flush() {
            scalars.append(contentsOf: String(decoding: bytes, as: UTF8.self).unicodeScalars)
            bytes.removeAll()
        }
        func hex(at start: Int) -> UInt32? {
            guard start + 4 <= raw.endIndex else { return nil }
            return UInt32(String(decoding: raw[start..<(start + 4)], as: UTF8.self), radix: 16)
        }
        while index < raw.endIndex {
            let byte = raw[index]
            guard byte == backslash, index + 1 < raw.endIndex else {
                bytes.append(byte)
                index += 1
                continue
            }
            let escaped = raw[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "u"):
                flush()
                guard var code = hex(at: index) else { continue }
                index += 4
                if (0xD800..<0xDC00).contains(code), index + 6 <= raw.endIndex, raw[index] == backslash,
                    raw[index + 1] == UInt8(ascii: "u"), let low = hex(at: index + 2), (0xDC00..<0xE000).contains(low)
                {
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            default: bytes.append(escaped)
            }
        }
        flush()
        return String(scalars)
    }
}
