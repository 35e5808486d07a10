/// Which status codes count as success. A response outside them fails with
/// ``CourierError/statusCode(_:)``, which carries the response.
///
/// Validation applies to real and stubbed responses alike. The default for a target is ``none``.
public enum ValidationType: Sendable, Hashable {
    /// Every status code is accepted.
    case none
    /// `200..<300`.
    case successCodes
    /// `200..<400`.
    case successAndRedirectCodes
    /// Exactly the listed codes.
    case customCodes(Set<Int>)

    /// Whether `statusCode` passes this validation.
    /// - Parameter statusCode: An HTTP status code.
    /// - Returns: `true` when the code is accepted.
    public func accepts(_ statusCode: Int) -> Bool {
        switch self {
        case .none: true
        case .successCodes: (200..<300).contains(statusCode)
        case .successAndRedirectCodes: (200..<400).contains(statusCode)
        case .customCodes(let codes): codes.contains(statusCode)
        }
    }
}
