import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Ten thousand tests at once, each with its own stubs and provider: none sees another's. CI also
/// runs this suite alone and holds it to 10 s on 2 cores (`.ci/run`, the scale step).
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
