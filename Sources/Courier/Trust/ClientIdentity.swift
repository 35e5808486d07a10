import Foundation

/// The certificate and private key a client presents when a server asks for one (mutual TLS).
///
/// The key material is never printed: `description` and the mirror (`dump`) name the format only.
public enum ClientIdentity: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// An identity in PEM: the certificate chain (the client's certificate first, then any
    /// intermediates) and its unencrypted private key (PKCS #8, or the traditional RSA or EC form).
    case pem(certificateChain: Data, privateKey: Data)
    /// An identity in a PKCS #12 archive (`.p12`, `.pfx`) with its password.
    case pkcs12(Data, password: String)

    /// The format only (`ClientIdentity.pem`, `ClientIdentity.pkcs12`), never the key or the password.
    public var description: String {
        switch self {
        case .pem: "ClientIdentity.pem"
        case .pkcs12: "ClientIdentity.pkcs12"
        }
    }

    /// The same as ``description``: no key material.
    public var debugDescription: String { description }

    /// A mirror without children, so `dump` shows no key material.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
