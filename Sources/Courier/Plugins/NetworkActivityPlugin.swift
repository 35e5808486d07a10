import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Tracks requests on the wire: calls back when one begins and ends, and streams how many are
/// active (for a spinner, a status bar, metrics).
///
/// ```swift
/// let activity = NetworkActivityPlugin()
/// let provider = Provider<API>(plugins: [activity])
/// for await count in await activity.activeCounts() { spinner.isHidden = count == 0 }
/// ```
///
/// A request begins at `willSend` and ends at the `didReceive` that follows it, for every attempt.
/// A request cancelled before it was sent never began, so it does not end either.
public actor NetworkActivityPlugin: Plugin {
    /// A change in activity.
    public enum Change: Sendable, Hashable {
        /// A request was sent.
        case began
        /// A request's answer (or failure) arrived.
        case ended
    }

    private let onChange: @Sendable (Change, any TargetType) -> Void
    /// Calls with an attempt on the wire (``RequestContext/id``).
    private var sending: Set<RequestID> = []
    private var subscribers: [UUID: AsyncStream<Int>.Continuation] = [:]

    /// How many requests are on the wire now.
    public private(set) var activeCount = 0

    /// Creates the plugin.
    /// - Parameter onChange: Called when a request begins or ends. Default: nothing.
    public init(onChange: @escaping @Sendable (Change, any TargetType) -> Void = { _, _ in }) {
        self.onChange = onChange
    }

    /// The number of active requests: now, then after every change. Each call makes a new stream.
    public func activeCounts() -> AsyncStream<Int> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        subscribers[id] = continuation
        continuation.yield(activeCount)
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        return stream
    }

    /// ``PluginHooks/willSend`` and ``PluginHooks/didReceive``.
    public nonisolated var implementedHooks: PluginHooks { [.willSend, .didReceive] }

    public func willSend(_ request: URLRequest, context: RequestContext) async {
        guard sending.insert(context.id).inserted else { return }
        change(by: 1, .began, context.target)
    }

    public func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {
        guard sending.remove(context.id) != nil else { return }
        change(by: -1, .ended, context.target)
    }

    private func change(by delta: Int, _ change: Change, _ target: any TargetType) {
        activeCount += delta
        onChange(change, target)
        for continuation in subscribers.values { continuation.yield(activeCount) }
    }

    private func unsubscribe(_ id: UUID) {
        subscribers[id] = nil
    }
}
