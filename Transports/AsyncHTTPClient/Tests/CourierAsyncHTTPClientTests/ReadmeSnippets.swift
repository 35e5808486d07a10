// The README's and the DocC articles' samples that need this package, compiled as written (the rest
// are compiled in Examples/Sources/DocSnippets; scripts/readme-snippets looks in both).
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

/// Stands in for "your transport" in the conformance catalog's sample.
private struct MyTransport: Transport {
    func send(_ transfer: Transfer) async throws -> Response {
        try await transfer.sendBuffered { try await AsyncHTTPClientTransport().send($0) }
    }
}

@Suite(
    .enabled(if: ConformanceServers.fromEnvironment != nil, "needs scripts/test's servers"),
    .disabled("compiled only: the documentation's sample, with a stand-in transport that buffers everything"))
struct MyTransportConformance {
    @Test(arguments: TransportConformance.checks)
    func conforms(_ check: TransportConformance.Check) async throws {
        try await check.run(on: MyTransport(), servers: #require(ConformanceServers.fromEnvironment))
    }
}

/// The former README trust sample (a PEM identity) and the TLS and Trust article's, compiled as written.
private func trustSection(privateCA: Data, clientChain: Data, clientKey: Data) throws {
    let transport = try AsyncHTTPClientTransport(
        trust: TrustPolicies(
            hosts: [
                "internal.example.com": TrustPolicy(
                    roots: .only([.pem(privateCA)]),
                    clientIdentity: .pem(certificateChain: clientChain, privateKey: clientKey))
            ]))
    _ = transport
}

private enum InternalAPI: TargetType {
    case status
    var baseURL: URL { URL(string: "https://internal.example.com")! }
    var path: String { "status" }
    var headers: [String: String] { [:] }
}

private func trustArticle(caURL: URL, p12: Data, password: String) throws {
    let privateCA = try Data(contentsOf: caURL)
    let transport = try AsyncHTTPClientTransport(
        trust: TrustPolicies(
            hosts: [
                "internal.example.com": TrustPolicy(
                    roots: .only([.pem(privateCA)]),
                    clientIdentity: .pkcs12(p12, password: password))
            ]))
    let provider = Provider<InternalAPI>(transport: transport)
    _ = provider
}
