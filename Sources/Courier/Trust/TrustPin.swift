import Foundation

/// A pin: a public key or a certificate that a server's chain must contain.
///
/// A public-key pin is the SHA-256 of the certificate's `SubjectPublicKeyInfo` (its DER), in
/// base64, as HPKP and most pinning tools print it:
///
/// ```sh
/// openssl x509 -in server.pem -pubkey -noout | openssl pkey -pubin -outform der \
///     | openssl dgst -sha256 -binary | base64
/// ```
///
/// A key pin survives the certificate's renewal with the same key; a certificate pin does not.
/// Give a ``TrustPolicy`` more than one pin (the current key and a backup key that is not deployed
/// yet): the server is trusted when any one matches.
public struct TrustPin: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case publicKey(sha256Base64: String)
        case certificate(TrustCertificate)
    }

    let kind: Kind

    /// A public-key pin: the base64 SHA-256 of a `SubjectPublicKeyInfo`.
    /// - Parameter sha256: 44 characters of base64; checked when the transport is made.
    public static func publicKey(sha256: String) -> TrustPin {
        TrustPin(kind: .publicKey(sha256Base64: sha256))
    }

    /// A certificate pin: this exact certificate must be in the server's chain.
    /// - Parameter certificate: The certificate.
    public static func certificate(_ certificate: TrustCertificate) -> TrustPin {
        TrustPin(kind: .certificate(certificate))
    }
}
