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

    @Test func bridgesToNSErrorWithItsUnderlyingErrorAndTheSameDescription() throws {
        let cause = URLError(.cannotConnectToHost)
        let errors: [CourierError] = [
            .underlying(cause, nil), .statusCode(response), .timedOut(.seconds(2)), .cancelled,
            .retryLimitReached(attempts: 3, lastError: .underlying(cause, response)),
            .limitExceeded(.responseBody(limit: 10)), .requestMapping("no host"),
        ]
        for error in errors {
            let bridged = error as NSError
            #expect(bridged.domain == "Courier.CourierError")
            #expect(bridged.code == error.errorCode)
            #expect(bridged.localizedDescription == error.localizedDescription)
            #expect(bridged.localizedDescription == error.description)
        }
        let underlying = try #require(
            (CourierError.underlying(cause, nil) as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)
        #expect(underlying.domain == NSURLErrorDomain)
        #expect(underlying.code == URLError.cannotConnectToHost.rawValue)
        // A retried request's bridged error leads to the last attempt's cause.
        let retried = CourierError.retryLimitReached(attempts: 3, lastError: .underlying(cause, response)) as NSError
        #expect((retried.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == URLError.cannotConnectToHost.rawValue)
        #expect((CourierError.statusCode(response) as NSError).userInfo[NSUnderlyingErrorKey] == nil)
        // Codes are distinct per case.
        #expect(Set(errors.map(\.errorCode)).count == errors.count)
    }
}
