import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The transport a stubbed request goes through: it answers with the endpoint's sample response
/// (after `delay` on the provider's clock), and the same transfer path as the network's does the
/// rest (file bodies, multipart bodies, downloads, progress, limits).
struct SampleTransport: Transport {
    let sample: @Sendable () -> SampleResponse
    let delay: Duration?
    let clock: any Clock<Duration>

    func send(_ request: URLRequest) async throws -> Response {
        try await send(Transfer(request: request))
    }

    /// The shared buffered path; a body already in the request is answered without suspending
    /// (a stubbed request is the pipeline's own cost, so it takes no extra hops).
    func send(_ transfer: Transfer) async throws -> Response {
        if let delay {
            do { try await clock.sleep(for: delay) } catch { throw CourierError.cancelled }
        }
        guard case .inRequest = transfer.body else {
            return try await transfer.sendBuffered { try SampleTransport.response(for: $0, sample: sample()) }
        }
        let request = transfer.request
        let response = try SampleTransport.response(for: request, sample: sample())
        return try transfer.completeBuffered(response, sent: Int64(request.httpBody?.count ?? 0))
    }

    static func response(for request: URLRequest, sample: SampleResponse) throws -> Response {
        switch sample {
        case .networkResponse(let statusCode, let data):
            let httpResponse = request.url.flatMap {
                HTTPURLResponse(url: $0, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: nil)
            }
            return Response(statusCode: statusCode, data: data, request: request, response: httpResponse)
        case .response(let httpResponse, let data):
            return Response(
                statusCode: httpResponse.statusCode, data: data, request: request, response: httpResponse)
        case .networkError(let error):
            throw error
        }
    }
}
