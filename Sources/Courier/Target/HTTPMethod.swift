/// An HTTP request method.
///
/// The standard verbs are static members (`.get`, `.post`, …). Any other method can be written as a
/// string literal or with ``init(rawValue:)``; it must be a valid HTTP token (RFC 9110 §5.6.2), which
/// ``Endpoint/urlRequest()`` checks before anything is sent.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The method name exactly as it goes on the wire, e.g. `"GET"`.
    public let rawValue: String

    /// Creates a method from its wire name. Names are case-sensitive in HTTP; the standard ones are
    /// upper case.
    /// - Parameter rawValue: The method name, e.g. `"PROPFIND"`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates a method from a string literal, e.g. `let purge: HTTPMethod = "PURGE"`.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    public var description: String { rawValue }

    /// `CONNECT`.
    public static let connect = HTTPMethod(rawValue: "CONNECT")
    /// `DELETE`.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `GET`.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `OPTIONS`.
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// `PATCH`.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `POST`.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `QUERY` (a safe method with a body, draft-ietf-httpbis-safe-method-w-body).
    public static let query = HTTPMethod(rawValue: "QUERY")
    /// `TRACE`.
    public static let trace = HTTPMethod(rawValue: "TRACE")

    /// Whether the method is *safe* (RFC 9110 §9.2.1): `GET`, `HEAD`, `OPTIONS`, `TRACE`, `QUERY`.
    public var isSafe: Bool {
        switch rawValue {
        case "GET", "HEAD", "OPTIONS", "TRACE", "QUERY": true
        default: false
        }
    }

    /// Whether the method is *idempotent* (RFC 9110 §9.2.2): the safe methods plus `PUT` and `DELETE`.
    public var isIdempotent: Bool {
        isSafe || rawValue == "PUT" || rawValue == "DELETE"
    }

    /// Whether the name is a valid HTTP token: one or more of `!#$%&'*+-.^_`|~`, digits and letters.
    var isValidToken: Bool {
        switch rawValue {
        // Issue 29: the common names without a scan (checked twice a request: when the request is
        // built and on the request that goes on the wire).
        case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS": true
        default: !rawValue.isEmpty && rawValue.utf8.allSatisfy(HTTPToken.isTokenByte)
        }
    }
}

/// Byte classes from RFC 9110 used to validate methods and header names.
enum HTTPToken {
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
