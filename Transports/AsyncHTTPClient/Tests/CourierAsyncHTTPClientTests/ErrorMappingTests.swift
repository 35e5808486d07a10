import AsyncHTTPClient
import CCourierZlib
import Courier
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import CourierAsyncHTTPClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct ErrorMappingTests {
    @Test func networkErrorsBecomeURLErrors() {
        let cases: [(any Error, URLError.Code)] = [
            (HTTPClientError.remoteConnectionClosed, .networkConnectionLost),
            // A request body shorter or longer than announced: not retried as a lost connection.
            (HTTPClientError.bodyLengthMismatch, .unknown),
            (HTTPClientError.readTimeout, .timedOut),
            (HTTPClientError.connectTimeout, .timedOut),
            (HTTPClientError.invalidURL, .badURL),
            (HTTPParserError.invalidChunkSize, .badServerResponse),
            // The connection ended inside a message: a body cut short.
            (HTTPParserError.invalidEOFState, .networkConnectionLost),
            (IOError(errnoCode: ECONNREFUSED, reason: "connect"), .cannotConnectToHost),
            (IOError(errnoCode: ECONNRESET, reason: "read"), .networkConnectionLost),
            (ChannelError.eof, .networkConnectionLost),
        ]
        for (error, code) in cases {
            let mapped = ErrorMapping.normalize(error) as? URLError
            #expect(mapped?.code == code, "\(error)")
            #expect(mapped?.userInfo[NSUnderlyingErrorKey] != nil)
        }
    }

    @Test func cancellationStaysCancellation() {
        #expect(ErrorMapping.normalize(HTTPClientError.cancelled) is CancellationError)
        #expect(ErrorMapping.normalize(CancellationError()) is CancellationError)
    }

    @Test func courierAndFileErrorsPassThrough() {
        #expect(ErrorMapping.normalize(CourierError.limitExceeded(.responseBody(limit: 1))) is CourierError)
        struct Other: Error {}
        #expect(ErrorMapping.normalize(Other()) is Other)
    }
}
