// The request every pipeline measurement makes, and the three plugins "three plugins" means, shared
// so they all measure the same thing: callgrind's counts (StubLoop, scripts/bench-breakdown), the
// malloc thresholds CI holds (Benchmarks' StubbedPipeline) and LoadCheck's rows.
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

/// Three plugins doing what real ones do: sign, observe, pass the result on.
public func threePlugins() -> [any Plugin] { [SigningPlugin(), ObservingPlugin(), PassThroughPlugin()] }

/// Signs every request, as an access-token plugin does.
public struct SigningPlugin: Plugin {
    public init() {}
    public var implementedHooks: PluginHooks { .prepare }
    public func prepare(_ request: consuming URLRequest, context: RequestContext) async throws -> URLRequest {
        var request = request
        request.setValue("Bearer token", forHTTPHeaderField: "Authorization")
        return request
    }
}

/// Counts what is sent and received, as a metrics plugin does.
public struct ObservingPlugin: Plugin {
    public let seen = Counter()
    public init() {}
    public var implementedHooks: PluginHooks { [.willSend, .didReceive] }
    public func willSend(_ request: URLRequest, context: RequestContext) async { seen.add(1) }
    public func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async { seen.add(1) }
}

/// Hands the result on unchanged, as a mapping plugin does when it has nothing to change.
public struct PassThroughPlugin: Plugin {
    public init() {}
    public var implementedHooks: PluginHooks { .process }
    public func process(
        _ result: Result<Response, CourierError>, context: RequestContext
    ) async -> Result<Response, CourierError> {
        result
    }
}

/// A counter shared between tasks (a benchmark helper, not library code).
public final class Counter: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = 0
    public init() {}
    /// Adds `amount`; returns the new value.
    @discardableResult public func add(_ amount: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += amount
        return value
    }
    public var count: Int { add(0) }
}
