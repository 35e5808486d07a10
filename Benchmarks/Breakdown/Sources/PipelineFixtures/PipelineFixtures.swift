// The request every pipeline measurement makes, shared so they all measure the same thing:
// callgrind's counts (StubLoop, scripts/bench-breakdown) and the malloc thresholds CI holds
// (Benchmarks' StubbedPipeline).
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// GET `https://api.example.com/v1/items/1`, no headers, success codes validated, a 25-byte JSON
/// sample.
public struct Small: TargetType {
    public init() {}
    public var headers: [String: String] { [:] }
    public var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    public var path: String { "items/1" }
    public var validation: ValidationType { .successCodes }
    public var sampleData: Data { Data(#"{"id":1,"name":"courier"}"#.utf8) }
}

/// A transport that answers every request at once from memory, without suspending, as a network
/// transport answers: the destination checked, a head of two fields read off the wire, the body,
/// and `TransferMetrics` with the response start read from the transfer's clock. A `Provider` on
/// it runs the transport path (not the stub path), so its allocations per request are the
/// pipeline's on a real transport plus these few.
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
