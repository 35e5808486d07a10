import Courier
import CourierTransportConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The custom transport of `Transport`'s documentation, copied from it as a user would: it
/// implements the one requirement (and `stream`), and passes the conformance suite.
struct Tagging: Transport {
    let inner: any Transport
    func send(_ transfer: Transfer) async throws -> Response {
        try await inner.send(tagged(transfer))
    }
    func stream(_ transfer: Transfer) async throws -> StreamedResponse {
        try await inner.stream(tagged(transfer))
    }
    private func tagged(_ transfer: Transfer) -> Transfer {
        var transfer = transfer
        transfer.request.setValue("docs", forHTTPHeaderField: "X-Tag")
        return transfer
    }
}

/// One check at a time: the same checks run at once for `URLSessionTransport` and the recording
/// `ReplayTransport`, and a third copy in parallel held the loopback servers' threads long enough
/// for requests elsewhere in the run to pass their deadlines.
@Suite(.serialized, .enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"))
struct CustomTransportConformanceTests {
    @Test(arguments: TransportConformance.checks)
    func conforms(_ check: TransportConformance.Check) async throws {
        try await check.run(
            on: Tagging(inner: URLSessionTransport()), servers: #require(ConformanceServers.fromEnvironment))
    }
}
