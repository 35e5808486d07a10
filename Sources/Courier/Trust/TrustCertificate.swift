import Foundation

/// An X.509 certificate given to a ``TrustPolicy``: a root to trust, or a certificate to pin.
///
/// The bytes are read when a transport is made: a certificate that cannot be read is a
/// ``TrustConfigurationError`` then, not a surprise at the first request.
public struct TrustCertificate: Sendable, Hashable {
    enum Encoding: Sendable, Hashable {
        case pem
        case der
    }

    let bytes: Data
    let encoding: Encoding

    /// A certificate in PEM (`-----BEGIN CERTIFICATE-----`). A PEM with several certificates
    /// stands for all of them (a bundle of roots, say).
    /// - Parameter data: The PEM text.
    public static func pem(_ data: Data) -> TrustCertificate {
        TrustCertificate(bytes: data, encoding: .pem)
    }

    /// A certificate in DER (binary, as in a `.cer` file).
    /// - Parameter data: The DER bytes.
    public static func der(_ data: Data) -> TrustCertificate {
        TrustCertificate(bytes: data, encoding: .der)
    }

    /// The certificates in DER (one, or each of a PEM bundle), each checked to be an X.509
    /// certificate; for transports.
    /// - Returns: The certificates, in DER.
    /// - Throws: ``TrustConfigurationError`` (``TrustConfigurationError/Setting/certificate``) when
    ///   the bytes are not a readable certificate.
    public func derCertificates() throws(TrustConfigurationError) -> [Data] {
        let certificates: [Data]
        switch encoding {
        case .der: certificates = [bytes]
        case .pem: certificates = PEM.blocks(labelled: "CERTIFICATE", in: bytes)
        }
        guard !certificates.isEmpty, certificates.allSatisfy({ DER.subjectPublicKeyInfo(ofCertificate: $0) != nil })
        else {
            throw TrustConfigurationError(
                setting: .certificate, problem: .invalid, host: nil,
                reason: "a certificate is not a readable X.509 certificate in \(encoding == .pem ? "PEM" : "DER")")
        }
        return certificates
    }
}

/// PEM blocks (RFC 7468).
enum PEM {
    /// The decoded contents of every `-----BEGIN label-----` … `-----END label-----` block.
    static func blocks(labelled label: String, in data: Data) -> [Data] {
        guard let text = String(data: data, encoding: .utf8) else { return [] }
        let begin = "-----BEGIN \(label)-----"
        let end = "-----END \(label)-----"
        var blocks: [Data] = []
        var rest = text[...]
        while let start = rest.range(of: begin), let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex)
        {
            let body = rest[start.upperBound..<stop.lowerBound]
            if let decoded = Data(base64Encoded: String(body), options: .ignoreUnknownCharacters), !decoded.isEmpty {
                blocks.append(decoded)
            }
            rest = rest[stop.upperBound...]
        }
        return blocks
    }
}
