import Foundation

/// What ``CourierTransport`` refuses before sending.
public enum CourierOpenAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request body is larger than ``CourierTransport/maxRequestBodyBytes``; nothing was sent.
    case requestBodyTooLarge(limit: Int)
    /// The request body could not be written to its temporary file (``CourierTransport/spoolDirectory``);
    /// nothing was sent and the file is removed.
    case requestBodySpoolFailed(URL, reason: String)

    public var description: String {
        switch self {
        case .requestBodyTooLarge(let limit):
            "The request body is larger than CourierTransport's maxRequestBodyBytes (\(limit) bytes); nothing was "
                + "sent. Raise the limit, or send large bodies with a Courier target (HTTPTask.uploadFile)."
        case .requestBodySpoolFailed(let url, let reason):
            "The request body could not be spooled to \(url.path) (\(reason)); nothing was sent. Check "
                + "CourierTransport's spoolDirectory (free space, permissions)."
        }
    }
}
