import Foundation

/// One call's identity, metrics and start, carried through the driver.
struct CallRecord {
    var context: RequestContext
    var metrics: RequestMetrics
    /// When the call began (the provider's `elapsed`).
    let start: Duration
    /// The latest reading of the clock, reused where nothing can have happened since.
    var last: Duration
    /// The compressed body's temporary file, removed when the call ends (compressed uploads).
    var compressedBody: URL?
    /// The call's deadline, when it has one: a cancel it caused is reported as `.timedOut`.
    var expiry: DeadlineExpiry?

    init(id: RequestID, target: any TargetType, start: Duration) {
        context = RequestContext(id: id, target: target)
        metrics = RequestMetrics(id: context.id)
        self.start = start
        last = start
    }

    /// Runs `body` for every plugin in `plugins` (the ones that implement the hook), in order, and
    /// counts the time: two clock readings for all of them, the second kept in ``last``. With none,
    /// nothing is read and ``last`` stays as it was.
    nonisolated(nonsending) mutating func hooks<Target>(
        _ plugins: [any Plugin], of provider: Provider<Target>,
        _ body: nonisolated(nonsending) (any Plugin, RequestContext) async -> Void
    ) async {
        guard !plugins.isEmpty else { return }
        let begun = provider.elapsed()
        for plugin in plugins { await body(plugin, context) }
        last = provider.elapsed()
        metrics.plugins += last - begun
    }
}
