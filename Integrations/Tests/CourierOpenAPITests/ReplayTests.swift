import Courier
import CourierOpenAPI
import CourierTesting
import Foundation
import Testing

/// A generated client replaying a recorded exchange (Fixtures/echo.har) through `ReplayTransport`.
@Suite struct ReplayTests {
    @Test func aGeneratedClientReplaysARecordedExchange() async throws {
        let transport = ReplayTransport("echo", mode: .replay)
        let client = Client(
            serverURL: URL(string: "https://echo.example.com")!,
            transport: CourierTransport(provider: Provider(transport: transport)))
        let echo = try await client.getEcho(query: .init(name: "ada")).ok.body.json
        #expect(echo.url == "https://echo.example.com/get?name=ada")
        #expect(echo.args?.additionalProperties == ["name": "ada"])
    }
}
