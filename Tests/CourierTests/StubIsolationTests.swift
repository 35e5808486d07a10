import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Ten thousand tests at once, each with its own stubs and provider: none sees another's. CI also
/// runs this suite alone and holds it to twice ``StubIsolationBaselineTests`` (`.ci/run`, the scale
/// step).
@Suite struct StubIsolationTests {
    @Test(arguments: 0..<10_000)
    func eachTestSeesOnlyItsOwnStubs(index: Int) async throws {
        struct Probe: TargetType {
            var headers: [String: String] { [:] }
            var baseURL: URL { URL(string: "https://shared.example.com")! }
            var path: String { "value" }
        }
        let transport = StubTransport().on(.get, "value", .data(Data("\(index)".utf8)))
        let provider = Provider<Probe>(transport: transport)
        for _ in 0..<5 {
            #expect(try await provider.request(Probe()).mapString() == "\(index)")
        }
        #expect(transport.requests.count == 5)
    }
}

/// The scale check's baseline (`.ci/run`): ten thousand cases with the same arguments and as many
/// expectations as ``StubIsolationTests``, but no provider: what Swift Testing itself costs per
/// case, measured in the same run. Runs only when `COURIER_SCALE_BASELINE` is set.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["COURIER_SCALE_BASELINE"] != nil))
struct StubIsolationBaselineTests {
    @Test(arguments: 0..<10_000)
    func eachCaseChecksItsOwnValue(index: Int) async throws {
        let value = "\(index)"
        for _ in 0..<5 {
            #expect(value == "\(index)")
        }
        #expect(value.utf8.count == String(index).utf8.count)
    }
}
