/// A content coding named by a `Content-Encoding` header (RFC 9110 §8.4), for transports that
/// decode bodies themselves: one reading of the header for every transport and for Courier's
/// limits, so they agree on which bodies are encoded.
public enum ContentCoding: Sendable, Hashable {
    /// `gzip`, or its old name `x-gzip`.
    case gzip
    /// `deflate` (zlib-wrapped by the standard, raw by some servers).
    case deflate
    /// Any other coding (`br`, `compress`, `zstd`, …), its name lowercased.
    case other(String)

    /// The codings a `Content-Encoding` value names, in the order they were applied to the body
    /// (undo them from the last). Repeated fields are joined with commas, as HTTP allows; each
    /// member is matched without case and without the spaces and tabs around it; `identity` and
    /// empty members change nothing and are left out.
    /// - Parameter contentEncoding: The header's value, if any.
    /// - Returns: The codings; empty when the body is not encoded.
    public static func list(_ contentEncoding: String?) -> [ContentCoding] {
        guard let contentEncoding, !contentEncoding.isEmpty else { return [] }
        var codings: [ContentCoding] = []
        for var member in contentEncoding.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            while let first = member.first, isSpace(first) { member.removeFirst() }
            while let last = member.last, isSpace(last) { member.removeLast() }
            guard !member.isEmpty else { continue }
            let name = String(decoding: member.map(ASCII.lowercased), as: UTF8.self)
            switch name {
            case "identity": continue
            case "gzip", "x-gzip": codings.append(.gzip)
            case "deflate": codings.append(.deflate)
            default: codings.append(.other(name))
            }
        }
        return codings
    }

    /// Whether a body with this `Content-Encoding` is encoded: it names a coding other than
    /// `identity`.
    static func isEncoded(_ contentEncoding: String?) -> Bool {
        !list(contentEncoding).isEmpty
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }
}
