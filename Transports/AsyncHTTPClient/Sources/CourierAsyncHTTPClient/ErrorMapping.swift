import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// AsyncHTTPClient's and SwiftNIO's errors as the `URLError` a Courier user already handles
/// (`URLSessionTransport` reports those), the original kept under `NSUnderlyingErrorKey`.
enum ErrorMapping {
    static func normalize(_ error: any Error) -> any Error {
        switch error {
        case is CourierError, is URLError, is CancellationError, is FileBodyFailure, is CocoaError:
            return error
        default:
            break
        }
        if let error = error as? HTTPClientError, error == .cancelled || error == .requestStreamCancelled {
            return CancellationError()
        }
        guard let code = code(for: error) else { return error }
        return URLError(code, userInfo: [NSUnderlyingErrorKey: error, NSLocalizedDescriptionKey: "\(error)"])
    }

    private static func code(for error: any Error) -> URLError.Code? {
        if let error = error as? HTTPClientError {
            switch error {
            case .remoteConnectionClosed, .uncleanShutdown: return .networkConnectionLost
            // The request body did not have the length announced (a file that changed while it was
            // sent): the caller's body, not the connection, so not a failure a retry would fix.
            case .bodyLengthMismatch: return .unknown
            case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .tlsHandshakeTimeout,
                .getConnectionFromPoolTimeout:
                return .timedOut
            case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath: return .badURL
            default: return .unknown
            }
        }
        // The connection ended inside a message (a body cut short): lost, as URLSession reports it
        // (and the default retry policy retries it); any other parse failure is a bad response.
        if let error = error as? HTTPParserError {
            return error == .invalidEOFState ? .networkConnectionLost : .badServerResponse
        }
        if error is NIOConnectionError { return .cannotConnectToHost }
        if let error = error as? IOError { return code(forErrno: error.errnoCode) }
        #if canImport(Network)
            // On Apple platforms AsyncHTTPClient runs on Network.framework, whose POSIX and TLS
            // errors it wraps in types of its own.
            if let error = error as? HTTPClient.NWPOSIXError { return code(forErrno: error.errorCode.rawValue) }
            if error is HTTPClient.NWTLSError { return .secureConnectionFailed }
        #endif
        if let error = error as? ChannelError {
            switch error {
            case .connectTimeout: return .timedOut
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed: return .networkConnectionLost
            default: return .unknown
            }
        }
        return nil
    }

    /// A socket error number as URLSession reports it.
    private static func code(forErrno number: Int32) -> URLError.Code {
        switch number {
        case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH: .cannotConnectToHost
        case ECONNRESET, EPIPE, ECONNABORTED: .networkConnectionLost
        case ETIMEDOUT: .timedOut
        default: .unknown
        }
    }
}
