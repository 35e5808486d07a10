import Courier
import CourierOpenAPI

// The samples of CourierOpenAPI.docc, compiled as written (with the tests' generated client; not
// run). A change here goes into the article too.

/// Stands in for the app's own token store in the samples.
actor Tokens {
    func current() -> String { "token" }
}

func overviewSample(tokens: Tokens) async throws -> Components.Schemas.Echo {
    let provider = Provider<OpenAPIOperation>(
        plugins: [.accessToken { _ in await tokens.current() }, .logger()],
        retryPolicy: .default)
    let client = Client(serverURL: try Servers.Server1.url(), transport: CourierTransport(provider: provider))
    let echo = try await client.getEcho(query: .init(name: "ada")).ok.body.json
    return echo
}
