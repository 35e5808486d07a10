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
    /// Whether the request is exactly as ``Endpoint/urlRequest()`` built it, which checked its
    /// method and every header: no request mapping of the caller's, no header of the call's, no
    /// compression and no plugin's `prepare` has touched it since. An attempt that signs nothing
    /// sends it unchanged, so its final check would repeat that one (issue 29: 2.5 % of a
    /// stubbed request).
    var requestIsAsBuilt = false

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
