// The README's samples that need this package, compiled as written (the rest are compiled in
// Examples/Sources/DocSnippets).
import Courier
import CourierAsyncHTTPClient
import CourierTransportConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private enum GitHub: TargetType {
    case zen
    var baseURL: URL { URL(string: "https://api.github.com")! }
    var path: String { "zen" }
    var headers: [String: String] { [:] }
}

private func transportSection() {
    let provider = Provider<GitHub>(transport: AsyncHTTPClientTransport())
    _ = provider
}

/// Stands in for "your transport" in the README's conformance sample.
private struct MyTransport: Transport {
    func send(_ request: URLRequest) async throws -> Response {
        try await AsyncHTTPClientTransport().send(request)
    }
}

@Suite(
    .enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"),
    .disabled("compiled only: the README's sample, with a stand-in transport that buffers everything"))
struct MyTransportConformance {
    @Test(arguments: TransportConformance.checks)
    func conforms(_ check: TransportConformance.Check) async throws {
        try await check.run(on: MyTransport(), servers: #require(ConformanceServers.fromEnvironment))
    }
}
