import Courier
import Foundation
import Testing

@Suite struct CourierErrorTests {
    private let response = Response(statusCode: 500, data: Data("x".utf8))

    @Test func responseAndUnderlyingAccessors() {
        struct Cause: Error {}
        #expect(CourierError.statusCode(response).response?.statusCode == 500)
        #expect(CourierError.objectMapping(Cause(), response).underlyingError is Cause)
        #expect(CourierError.objectMapping(Cause(), response).response?.statusCode == 500)
        #expect(CourierError.underlying(Cause(), response).response?.statusCode == 500)
        #expect(CourierError.underlying(Cause(), nil).response == nil)
        #expect(CourierError.encodableMapping(Cause()).underlyingError is Cause)
        #expect(CourierError.requestMapping("bad").underlyingError == nil)
        #expect(CourierError.cancelled.response == nil)
    }

    @Test func wrappingNormalizesCancellationAndKeepsCourierErrors() {
        #expect(CourierError(CancellationError()).isCancellation)
        #expect(CourierError(URLError(.cancelled)).isCancellation)
        #expect(CourierError(NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled)).isCancellation)
        #expect(CourierError(CourierError.timedOut(.seconds(1))).isTimeout)
        #expect(CourierError(URLError(.timedOut)).isTimeout)
        let wrapped = CourierError(NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotConnectToHost))
        #expect((wrapped.underlyingError as? URLError)?.code == .cannotConnectToHost)
    }

    @Test(arguments: [
        (CourierError.requestMapping("no host"), "no host"),
        (.statusCode(Response(statusCode: 404, data: Data())), "404"),
        (.timedOut(.seconds(3)), "3"),
        (.cancelled, "cancelled"),
        (.stringMapping(Response(statusCode: 200, data: Data([0xFF]))), "string"),
        (.parameterEncoding(ParameterEncodingFailure.nonFiniteNumber(key: "lat")), "lat"),
        (.underlying(URLError(.cannotConnectToHost), nil), "failed"),
    ])
    func descriptionsAreReadable(error: CourierError, mentions: String) {
        let text = error.localizedDescription
        #expect(text.contains(mentions), "\(text)")
        #expect(!text.contains("CourierError error"))
        #expect("\(error)" == text)
    }
}
