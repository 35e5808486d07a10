import Foundation

/// The certificate and private key a client presents when a server asks for one (mutual TLS).
///
/// The key material is never printed: `description` and its mirror (`dump`) name the format only.
public struct ClientIdentity: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    enum Source: Sendable {
        case pem(certificateChain: Data, privateKey: Data)
        case pkcs12(Data, password: String)
    }

    let source: Source

    /// An identity in PEM: the certificate chain (the client's certificate first, then any
    /// intermediates) and its unencrypted private key (PKCS #8, or the traditional RSA/EC form).
    /// - Parameters:
    ///   - certificateChain: The certificates, PEM.
    ///   - privateKey: The private key, PEM.
    public static func pem(certificateChain: Data, privateKey: Data) -> ClientIdentity {
        ClientIdentity(source: .pem(certificateChain: certificateChain, privateKey: privateKey))
    }

    /// An identity in a PKCS #12 archive (`.p12`, `.pfx`) with its password.
    /// - Parameters:
    ///   - data: The archive.
    ///   - password: Its password.
    public static func pkcs12(_ data: Data, password: String) -> ClientIdentity {
        ClientIdentity(source: .pkcs12(data, password: password))
    }

    public var description: String {
        switch source {
        case .pem: "ClientIdentity(PEM)"
        case .pkcs12: "ClientIdentity(PKCS #12)"
        }
    }

    public var debugDescription: String { description }

    /// A mirror without children, so `dump` shows no key material.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
