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

    init(id: RequestID, target: any TargetType, start: Duration) {
        context = RequestContext(id: id, target: target)
        metrics = RequestMetrics(id: context.id)
        self.start = start
        last = start
    }

    /// Runs `body` for every plugin, in order, and counts the time: two clock readings for all
    /// the plugins, the second kept in ``last``.
    nonisolated(nonsending) mutating func hooks<Target>(
        _ provider: Provider<Target>, _ body: nonisolated(nonsending) (any Plugin, RequestContext) async -> Void
    ) async {
        guard !provider.plugins.isEmpty else { return }
        let begun = provider.elapsed()
        for plugin in provider.plugins { await body(plugin, context) }
        last = provider.elapsed()
        metrics.plugins += last - begun
    }
}
