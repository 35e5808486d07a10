// What the benchmarks share, so that "three plugins" means the same three in every figure
// (the malloc thresholds of StubbedPipeline and LoadCheck's throughput and memory rows).
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Three plugins doing what real ones do: sign, observe, pass the result on.
public func threePlugins() -> [any Plugin] { [SigningPlugin(), ObservingPlugin(), PassThroughPlugin()] }

/// Signs every request, as an access-token plugin does.
public struct SigningPlugin: Plugin {
    public init() {}
    public func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
        var request = request
        request.setValue("Bearer token", forHTTPHeaderField: "Authorization")
        return request
    }
}

/// Counts what is sent and received, as a metrics plugin does.
public struct ObservingPlugin: Plugin {
    public let seen = Counter()
    public init() {}
    public func willSend(_ request: URLRequest, context: RequestContext) async { seen.add(1) }
    public func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async { seen.add(1) }
}

/// Hands the result on unchanged, as a mapping plugin does when it has nothing to change.
public struct PassThroughPlugin: Plugin {
    public init() {}
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

/// Runs `operation` `total` times in `workers` concurrent loops.
public func concurrently(
    _ workers: Int, total: Int, _ operation: @escaping @Sendable () async throws -> Void
) async throws {
    let started = Counter()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<workers {
            group.addTask {
                while started.add(1) <= total { try await operation() }
            }
        }
        try await group.waitForAll()
    }
}
