import Foundation

#if canImport(Synchronization)
    import Synchronization
#endif

/// Identifies one call to a provider (`request`, `requestWithProgress`), across its attempts.
///
/// Unique across providers: each provider draws a random 64-bit number when it is made, and
/// numbers its calls from 1.
public struct RequestID: Sendable, Hashable, CustomStringConvertible {
    /// The provider's random number.
    let provider: UInt64
    /// The call's number within its provider, from 1.
    public let sequence: UInt64

    init(provider: UInt64, sequence: UInt64) {
        self.provider = provider
        self.sequence = sequence
    }

    public var description: String {
        String(provider, radix: 16) + "-" + String(sequence)
    }
}

/// Hands out a provider's request ids. A counter, not a UUID: `UUID()` reads the system's random
/// source, which costs a system call on Linux (measured: 12% of a stubbed request's time).
final class RequestIDSource: Sendable {
    private let provider = UInt64.random(in: 1...UInt64.max)
    #if os(Linux)
        private let counter = Atomic<UInt64>(0)
    #else
        // `Atomic` needs macOS 15 / iOS 18; Courier supports older systems (see `Locked`).
        private let counter = Locked<UInt64>(0)
    #endif

    func next() -> RequestID {
        #if os(Linux)
            let sequence = counter.add(1, ordering: .relaxed).newValue
        #else
            let sequence = counter.withLock {
                $0 &+= 1
                return $0
            }
        #endif
        return RequestID(provider: provider, sequence: sequence)
    }
}

/// What every plugin hook of one call receives: which call it is, its target and its attempt.
///
/// The ``id`` is the same in every hook of a call (`prepare`, `willSend`, `didReceive`,
/// `willRetry`, `process`, `didFinish`) and different for every call, so a plugin can pair a
/// `willSend` with its `didReceive` (``NetworkActivityPlugin`` does) without tracking tasks.
public struct RequestContext: Sendable {
    /// The call.
    public let id: RequestID
    /// The target being requested (the wrapped one, for a ``MultiTarget``).
    public let target: any TargetType
    /// The attempt, from 1, as the retry policy counts them: a re-send after a credential refresh
    /// keeps its number. `0` in `prepare` (before the first send), and in `process` and
    /// `didFinish` of a call that sent nothing.
    public internal(set) var attempt: Int

    /// The target's type and, for an enum, its case, `GitHub.user`, never its associated values
    /// (which may hold secrets): a name for logs, metrics dimensions and trace spans.
    public var targetName: String { Self.name(of: target) }

    /// ``targetName`` for any target (CourierTesting names targets the same way).
    package static func name(of target: any TargetType) -> String {
        let type = String(describing: Swift.type(of: target))
        guard Mirror(reflecting: target).displayStyle == .enum else { return type }
        let caseName = String(describing: target).prefix { $0 != "(" }
        return caseName.isEmpty ? type : "\(type).\(caseName)"
    }

    /// Creates the context of a call no provider made, to call a plugin's hooks directly: in a
    /// plugin's own tests, say. Its ``id`` is new (a random provider number, call 1).
    /// - Parameters:
    ///   - target: The target the hooks are about.
    ///   - attempt: The attempt, from 1; `0` before anything is sent. Default: `1`.
    public init(target: any TargetType, attempt: Int = 1) {
        self.init(id: RequestID(provider: .random(in: 1...UInt64.max), sequence: 1), target: target, attempt: attempt)
    }

    init(id: RequestID, target: any TargetType, attempt: Int = 0) {
        self.id = id
        self.target = target
        self.attempt = attempt
    }
}
