import Foundation
import Testing

@testable import Courier

/// Issue 28 (connection details): how URLSession's task metrics become `TransferMetrics`.
@Suite struct TransferMetricsConnectionTests {
    @Test func aDurationNeedsBothDatesInOrder() {
        let start = Date(timeIntervalSinceReferenceDate: 1000)
        #expect(TransferMetrics.duration(from: start, to: start.addingTimeInterval(0.25)) == .milliseconds(250))
        #expect(TransferMetrics.duration(from: start, to: start) == .zero)
        #expect(TransferMetrics.duration(from: start, to: start.addingTimeInterval(-1)) == nil)
        #expect(TransferMetrics.duration(from: nil, to: start) == nil)
        #expect(TransferMetrics.duration(from: start, to: nil) == nil)
    }

    @Test(arguments: [
        ("h2", "HTTP/2"), ("H3", "HTTP/3"), ("http/1.1", "HTTP/1.1"), ("http/1.0", "HTTP/1.0"), ("spdy/3", nil),
    ])
    func protocolNames(name: String, version: String?) {
        #expect(TransferMetrics.httpVersion(protocolName: name) == version)
    }

    @Test func connectionDetailsDefaultToNotReported() {
        let metrics = TransferMetrics(bytesSent: 1)
        #expect(metrics.connectionReused == nil)
        #expect(metrics.remoteAddress == nil)
        #expect(metrics.domainLookup == nil)
        #expect(metrics.connect == nil)
        #expect(metrics.secureConnection == nil)
    }
}
