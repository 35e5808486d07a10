import CoreMetrics
// Courier's request metrics into swift-metrics: a plugin to copy.
import Courier

/// Records every call when it ends: a counter and a duration per target and outcome, and how many
/// attempts it took.
///
/// ```swift
/// MetricsSystem.bootstrap(PrometheusMetricsFactory())    // or any swift-metrics backend
/// let provider = Provider<GitHub>(plugins: [RequestMetricsPlugin()])
/// ```
///
/// Metrics: `courier_requests_total` (counter), `courier_request_duration_seconds` (timer, the
/// whole call: mappings, plugins, attempts, waits), `courier_request_attempts` (recorder). Their
/// dimensions: `target` (`GitHub.user`, never associated values) and `outcome` (the status class,
/// `2xx`…`5xx`, or `error`, `cancelled`, `timeout`).
struct RequestMetricsPlugin: Plugin {
    /// Where metrics go. Default: the bootstrapped `MetricsSystem.factory`.
    var factory: any MetricsFactory = MetricsSystem.factory

    func didFinish(_ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext) async {
        let dimensions = [("target", context.targetName), ("outcome", Self.outcome(of: result))]
        Counter(label: "courier_requests_total", dimensions: dimensions, factory: factory).increment()
        Timer(label: "courier_request_duration_seconds", dimensions: dimensions, factory: factory)
            .recordNanoseconds(Self.nanoseconds(metrics.total))
        Recorder(label: "courier_request_attempts", dimensions: dimensions, aggregate: true, factory: factory)
            .record(metrics.attempts.count)
    }

    static func outcome(of result: Result<Response, CourierError>) -> String {
        switch result {
        case .success(let response): "\(response.statusCode / 100)xx"
        case .failure(let error) where error.isCancellation: "cancelled"
        case .failure(let error) where error.isTimeout: "timeout"
        case .failure(let error): error.response.map { "\($0.statusCode / 100)xx" } ?? "error"
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
