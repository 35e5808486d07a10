/// What ``CourierTransport`` refuses before sending.
public enum CourierOpenAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request body is larger than ``CourierTransport/maxRequestBodyBytes``; nothing was sent.
    case requestBodyTooLarge(limit: Int)

    public var description: String {
        switch self {
        case .requestBodyTooLarge(let limit):
            "The request body is larger than CourierTransport's maxRequestBodyBytes (\(limit) bytes); nothing was "
                + "sent. Raise the limit, or send large bodies with a Courier target (HTTPTask.uploadFile)."
        }
    }
}
