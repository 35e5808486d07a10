import Foundation

/// Why a request body could not be compressed (``RequestCompression``); carried by
/// ``CourierError/requestCompression(_:)``. Nothing was sent.
public enum RequestCompressionFailure: Error, Sendable, CustomStringConvertible {
    /// The request already names a `Content-Encoding` (its value): its body is, or says it is,
    /// encoded already, and a second coding on top would not be what the header announces.
    /// Remove the header, or turn compression off for the target (`requestCompression` `nil`).
    case alreadyEncoded(String)
    /// The request's body is an `httpBodyStream`, which can be read only once and whose length is
    /// unknown: send the body as `HTTPTask.uploadFile` instead, which is compressed while it
    /// streams.
    case bodyStream
    /// The body could not be read, or its compressed copy written: the error (a
    /// ``FileBodyFailure``, ``MultipartFailure`` or a file system error).
    case io(any Error)

    public var description: String {
        switch self {
        case .alreadyEncoded(let coding):
            "the request already has Content-Encoding '\(coding)'; remove it or turn requestCompression off"
        case .bodyStream:
            "an httpBodyStream cannot be compressed (it can be read only once); send a file upload instead"
        case .io(let error):
            "\(error)"
        }
    }
}
