import Courier
import CourierTransportConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The `send(_: URLRequest)` convenience goes through the requirement: a transport that
/// implements only `send(_: Transfer)` answers it, and nothing recurses.
@Suite struct TransportRequirementTests {
    struct Echoing: Transport {
        func send(_ transfer: Transfer) async throws -> Response {
            Response(statusCode: 204, data: Data(), request: transfer.request)
        }
    }

    @Test func theURLRequestConvenienceUsesTheRequirement() async throws {
        let request = URLRequest(url: try #require(URL(string: "https://example.com/a")))
        let response = try await Echoing().send(request)
        #expect(response.statusCode == 204)
        #expect(response.request?.url == request.url)
    }
}
