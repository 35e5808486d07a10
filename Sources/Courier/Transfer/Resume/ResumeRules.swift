import Foundation

/// Durable downloads (issue 27): what a resumed download sends and how each answer is treated.
/// Pure: the headers of a response in, a decision out (unit-tested without a server).
enum ResumeRules {
    /// What a kept partial file says about the entity it is the start of.
    struct Offer: Sendable, Hashable {
        /// Bytes already on disk.
        var length: Int64
        /// The strong validator the server gave the entity: a strong `ETag` (quoted, as sent) or
        /// a `Last-Modified` date.
        var validator: String
        /// The entity's whole length, when the server said it.
        var total: Int64?
    }

    /// How an answer's body relates to the partial file.
    enum Decision: Sendable, Hashable {
        /// A `206` for exactly the rest: its body is appended.
        case append
        /// A `2xx` with the whole entity (`200`, also when `If-Range` no longer matched): the
        /// partial file is dropped and the body is the file.
        case replace
        /// The partial file cannot be continued (`416`, a changed validator, a `Content-Range`
        /// that does not start where the file ends or cannot be read, an encoded body): it is
        /// dropped and the request is sent again without `Range`.
        case restart(String)
        /// An answer about something else (an error status, a redirect): the partial file is kept
        /// for a later attempt and the body is not part of the entity.
        case keep
        /// A `206` to a request sent without `Range` that is not the whole entity: its body is a
        /// piece of the entity at an unknown place, never the download (nor a partial file).
        case refuse(String)
    }

    /// The headers that ask for the rest of the entity: `Range: bytes=N-` and `If-Range`.
    static func headers(for offer: Offer) -> [(String, String)] {
        [("Range", "bytes=\(offer.length)-"), ("If-Range", offer.validator)]
    }

    /// A strong validator for `If-Range` (RFC 9110 §13.1.5), or `nil` when the response has none
    /// and must not be resumed: a strong `ETag` (not `W/`), else `Last-Modified` when it is at
    /// least a second before `Date` (or there is no `Date`). A content-encoded body has none: its
    /// byte ranges count encoded bytes, and the file holds decoded ones.
    static func validator(_ header: (String) -> String?) -> String? {
        if let encoding = header("Content-Encoding"), !isIdentity(encoding) { return nil }
        if let etag = header("ETag")?.trimmingWhitespace(), !etag.isEmpty {
            return isStrongETag(etag) ? etag : nil
        }
        guard let text = header("Last-Modified"), let modified = HTTPDate.parse(text) else { return nil }
        if let date = header("Date").flatMap(HTTPDate.parse), date.timeIntervalSince(modified) < 1 { return nil }
        return text.trimmingWhitespace()
    }

    /// A quoted opaque tag without the weak prefix, printable ASCII only (it is sent back as a
    /// header value).
    static func isStrongETag(_ etag: String) -> Bool {
        let bytes = Array(etag.utf8)
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else {
            return false
        }
        return bytes.dropFirst().dropLast().allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") }
    }

    /// The entity's length a whole (`200`) response announces, when it is not encoded.
    static func total(ofWhole header: (String) -> String?) -> Int64? {
        if let encoding = header("Content-Encoding"), !isIdentity(encoding) { return nil }
        // Read as the body limit and progress read it: a sign or anything but digits is no length.
        return header("Content-Length").flatMap(HeaderNumber.length)
    }

    /// Decides about the final answer to a request that offered `offer` (`nil`: sent without
    /// `Range`).
    static func decide(status: Int, header: (String) -> String?, offer: Offer?) -> Decision {
        guard let offer else {
            // A 206 nobody asked for is the entity only when its range covers all of it.
            if status == 206 {
                guard let range = header("Content-Range").flatMap(ContentRange.init), range.first == 0,
                    range.total == range.last + 1
                else { return .refuse("a 206 to a request without Range") }
            }
            return (200..<300).contains(status) ? .replace : .keep
        }
        switch status {
        case 206:
            guard let range = header("Content-Range").flatMap(ContentRange.init) else {
                return .restart("a 206 without a valid Content-Range")
            }
            guard range.first == offer.length else {
                return .restart("a 206 for bytes from \(range.first), not \(offer.length)")
            }
            if let total = range.total, let expected = offer.total, total != expected {
                return .restart("the entity is now \(total) bytes, not \(expected)")
            }
            if let encoding = header("Content-Encoding"), !isIdentity(encoding) {
                return .restart("an encoded 206")
            }
            if let etag = header("ETag")?.trimmingWhitespace(), offer.validator.hasPrefix("\""),
                etag != offer.validator
            {
                return .restart("the entity changed (ETag \(etag))")
            }
            if !offer.validator.hasPrefix("\""), let modified = header("Last-Modified"),
                modified.trimmingWhitespace() != offer.validator
            {
                return .restart("the entity changed (Last-Modified \(modified))")
            }
            return .append
        case 416:
            return .restart("416 Range Not Satisfiable")
        case 200..<300:
            return .replace
        default:
            return .keep
        }
    }

    private static func isIdentity(_ encoding: String) -> Bool {
        let value = encoding.trimmingWhitespace().lowercased()
        return value.isEmpty || value == "identity"
    }
}

/// A `Content-Range: bytes first-last/total` header (RFC 9110 §14.4); `total` is `nil` for `*`.
/// Anything else (another unit, missing or reversed bounds, a total not past the last byte, signs,
/// spaces inside numbers, numbers too large) does not parse.
struct ContentRange: Sendable, Hashable {
    let first: Int64
    let last: Int64
    let total: Int64?

    init?(_ header: String) {
        let text = header.trimmingWhitespace()
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst(6).trimmingWhitespace()
        let parts = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]),
            first <= last
        else { return nil }
        var total: Int64?
        if parts[1] != "*" {
            guard let value = Self.number(parts[1]), value > last else { return nil }
            total = value
        }
        self.first = first
        self.last = last
        self.total = total
    }

    /// The bytes the range covers.
    var length: Int64 { last - first + 1 }

    /// Digits only, at most 18 (no overflow).
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}
