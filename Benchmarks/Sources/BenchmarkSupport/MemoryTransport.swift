import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that answers every request at once from memory, as a network transport answers:
/// the destination checked, a head of two fields read off the wire, the body, the metrics. A
/// `Provider` on it runs the transport path (not the stub path), so its allocations per request
/// are the pipeline's on a real transport plus these few.
public struct MemoryTransport: Transport {
    let body = Data(#"{"id":1,"name":"courier"}"#.utf8)
    let fields = [("Content-Type", "application/json"), ("Content-Length", "25")]

    public init() {}

    public func send(_ transfer: Transfer) async throws -> Response {
        try transfer.checkDestination()
        let request = transfer.request
        guard let url = request.url else { throw URLError(.badURL) }
        let metrics = TransferMetrics(
            bytesSent: 0, bytesReceived: Int64(body.count), redirects: 0, responseStart: transfer.elapsed?())
        return Response(
            statusCode: 200, data: body, request: request, url: url, headerFields: fields, transferMetrics: metrics)
    }
}
