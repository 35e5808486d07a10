import Courier
import Foundation

/// The misbehaving server started by `scripts/test` (scripts/fault_server.py), or `nil`.
enum FaultServer {
    static let baseURL: URL? = ProcessInfo.processInfo.environment["COURIER_FAULT_URL"].flatMap(URL.init(string:))
    static var isAvailable: Bool { baseURL != nil }
}

struct Fault: TargetType {
    var path: String
    var method: HTTPMethod = .get
    var task: HTTPTask = .plain
    var headers: [String: String] = [:]
    var timeout: Duration? = .seconds(2)
    var limits: Limits? = nil
    var baseURL: URL { FaultServer.baseURL ?? URL(string: "http://127.0.0.1:9")! }
}

/// A weak reference a test can poll from a `@Sendable` closure, to check an object was released.
final class WeakReference<Object: AnyObject>: Sendable {
    private let box: Locked<Box>

    private final class Box: @unchecked Sendable {
        // @unchecked: only read and written inside `WeakReference`'s lock.
        weak var object: Object?
        init(_ object: Object) { self.object = object }
    }

    init(_ object: Object) { box = Locked(Box(object)) }

    var isReleased: Bool { box.withLock { $0.object == nil } }
}
