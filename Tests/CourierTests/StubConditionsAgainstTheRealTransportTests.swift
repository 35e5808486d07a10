import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The stub's network conditions next to the real thing.
@Suite(.enabled(if: FaultServer.isAvailable, "needs scripts/test's fault server"), .timeLimit(.minutes(2)))
struct StubConditionsAgainstTheRealTransportTests {
    @Test func aDroppedConnectionFailsWithTheErrorURLSessionTransportGives() async throws {
        // The fault server announces 1,000 bytes and closes after 100. A patient deadline: under a
        // sanitizer with the whole suite running, the answer can take seconds.
        let real = await #expect(throws: CourierError.self) {
            try await Provider<Fault>().request(Fault(path: "close-mid-body", timeout: .seconds(60)))
        }
        let stub = StubTransport().on(
            .get, "close-mid-body", .data(Data(repeating: 0x78, count: 1_000)).droppingConnection(afterBytes: 100))
        let stubbed = await #expect(throws: CourierError.self) {
            // No deadline: a stall of the machine must not turn the stub's error into a timeout.
            try await Provider<Fault>(transport: stub).request(Fault(path: "close-mid-body", timeout: nil))
        }
        let realError = try #require(real?.underlyingError as? URLError)
        let stubError = try #require(stubbed?.underlyingError as? URLError)
        #expect(stubError.code == realError.code)
        #expect(stubError.localizedDescription == realError.localizedDescription)
    }
}
