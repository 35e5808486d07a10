import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A plugin that keeps the target name of every request it prepares.
final class OperationNames: Plugin, @unchecked Sendable {
    // @unchecked and a lock: a test reads the names synchronously after its calls.
    private let lock = NSLock()
    private var stored: [String] = []
    var names: [String] { lock.withLock { stored } }

    func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
        lock.withLock { stored.append(context.targetName) }
        return request
    }
}
