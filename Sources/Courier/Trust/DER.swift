import Foundation

/// Just enough DER (X.690) to find a certificate's `SubjectPublicKeyInfo`, for public-key pins.
enum DER {
    /// One element: its tag, and where its contents and the whole element lie in the bytes.
    struct Element {
        let tag: UInt8
        let contents: Range<Int>
        let whole: Range<Int>
    }

    /// The element that starts at `start` in `bytes`, if it is well formed and fits in `limit`.
    static func element(in bytes: [UInt8], at start: Int, limit: Int) -> Element? {
        guard start + 2 <= limit else { return nil }
        let tag = bytes[start]
        // Multi-byte tags do not occur in the parts of a certificate read here.
        guard tag & 0x1F != 0x1F else { return nil }
        var index = start + 1
        let first = bytes[index]
        index += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            // At most 4 length bytes (4 GiB), and DER forbids the indefinite form (0x80).
            guard (1...4).contains(count), index + count <= limit else { return nil }
            for _ in 0..<count {
                length = length << 8 | Int(bytes[index])
                index += 1
            }
        }
        guard length <= limit - index else { return nil }
        return Element(tag: tag, contents: index..<index + length, whole: start..<index + length)
    }

    /// The DER of the `SubjectPublicKeyInfo` of an X.509 certificate (RFC 5280 §4.1), or `nil` if
    /// the bytes are not a certificate.
    static func subjectPublicKeyInfo(ofCertificate data: Data) -> Data? {
        let bytes = [UInt8](data)
        let sequence: UInt8 = 0x30
        guard let certificate = element(in: bytes, at: 0, limit: bytes.count), certificate.tag == sequence,
            certificate.whole.upperBound == bytes.count,
            let tbs = element(in: bytes, at: certificate.contents.lowerBound, limit: certificate.contents.upperBound),
            tbs.tag == sequence
        else { return nil }
        // version [0] (optional), serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo
        var index = tbs.contents.lowerBound
        var fields: [Element] = []
        while index < tbs.contents.upperBound, fields.count < 7 {
            guard let field = element(in: bytes, at: index, limit: tbs.contents.upperBound) else { return nil }
            fields.append(field)
            index = field.whole.upperBound
        }
        let offset = fields.first?.tag == 0xA0 ? 1 : 0
        guard fields.count >= 6 + offset else { return nil }
        let spki = fields[5 + offset]
        guard spki.tag == sequence else { return nil }
        return Data(bytes[spki.whole])
    }
}
