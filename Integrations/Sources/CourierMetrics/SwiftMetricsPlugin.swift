import CoreMetrics
import Courier

/// Records every call into swift-metrics when it ends: a counter, a timer and the number of
/// attempts, per target, method, status class, outcome and cache status.
///
/// ```swift
/// MetricsSystem.bootstrap(PrometheusMetricsFactory())    // or any swift-metrics backend
/// let provider = Provider<GitHub>(plugins: [.swiftMetrics()])
/// ```
///
/// ## Metrics
/// Names follow the Prometheus conventions that swift-metrics backends use (snake case, a unit
/// suffix, `_total` on counters), with ``labelPrefix`` (`courier`) in front:
///
/// | name | kind | what |
/// |---|---|---|
/// | `courier_requests_total` | `Counter` | calls that ended |
/// | `courier_request_duration_seconds` | `Timer` (nanoseconds) | the whole call: mappings, plugins, attempts, waits |
/// | `courier_request_attempts` | `Recorder` (aggregating) | sends per call, re-sends after a refresh included |
/// | `courier_dns_lookup_duration_seconds` | `Timer` | the last attempt's DNS lookup, when the transport says |
/// | `courier_connect_duration_seconds` | `Timer` | the last attempt's connection setup, when the transport says |
/// | `courier_tls_handshake_duration_seconds` | `Timer` | the last attempt's TLS handshake, when the transport says |
///
/// The last three are recorded only for calls whose transport reported them (`TransferMetrics`:
/// `URLSessionTransport` on Apple platforms; a reused connection has none).
///
/// ## Dimensions
/// Every metric has the same five, each with a bounded set of values:
/// - `target`: the target's type and case, `GitHub.user` (`RequestContext.targetName`), never
///   associated values;
/// - `method`: the HTTP method, `GET`;
/// - `status_class`: `1xx` to `5xx` from the last response, `other` for a status outside 100–599,
///   `none` when no response arrived;
/// - `outcome`: `success`, `failure` (an error status, a mapping or transport error), `cancelled`
///   or `timeout`;
/// - `cache`: where the last response came from (`Response.cacheStatus`, with an `HTTPCache` on the
///   provider): `network`, `hit` (answered by the cache without the network), `revalidated` (a
///   stored response confirmed by a `304`), `stale_after_error`, or `none` when no response
///   arrived. A dimension rather than a counter of its own, as Prometheus-style backends prefer:
///   the hit ratio is `courier_requests_total{cache="hit"}` over all of `courier_requests_total`,
///   and hits' durations are apart from the network's.
public struct SwiftMetricsPlugin: Plugin {
    /// Where metrics go. Default: the bootstrapped `MetricsSystem.factory`.
    public let factory: any MetricsFactory
    /// The first word of every label. Default: `"courier"`.
    public let labelPrefix: String

    /// Creates the plugin.
    /// - Parameters:
    ///   - factory: Where metrics go. Default: `MetricsSystem.factory`.
    ///   - labelPrefix: The first word of every label. Default: `"courier"`.
    public init(factory: any MetricsFactory = MetricsSystem.factory, labelPrefix: String = "courier") {
        self.factory = factory
        self.labelPrefix = labelPrefix
    }

    /// `didFinish` alone.
    public var implementedHooks: PluginHooks { .didFinish }

    public func didFinish(
        _ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext
    ) async {
        let dimensions = Self.dimensions(of: result, context: context)
        Counter(label: "\(labelPrefix)_requests_total", dimensions: dimensions, factory: factory).increment()
        Timer(label: "\(labelPrefix)_request_duration_seconds", dimensions: dimensions, factory: factory)
            .recordNanoseconds(Self.nanoseconds(metrics.total))
        Recorder(
            label: "\(labelPrefix)_request_attempts", dimensions: dimensions, aggregate: true, factory: factory
        )
        .record(metrics.attempts.count)
        // The connection of the last attempt, when the transport says (`TransferMetrics`).
        guard let transfer = metrics.attempts.last?.transfer else { return }
        let phases = [
            ("dns_lookup", transfer.domainLookup), ("connect", transfer.connect),
            ("tls_handshake", transfer.secureConnection),
        ]
        for case (let phase, let duration?) in phases {
            Timer(label: "\(labelPrefix)_\(phase)_duration_seconds", dimensions: dimensions, factory: factory)
                .recordNanoseconds(Self.nanoseconds(duration))
        }
    }

    /// The five dimensions of a call's metrics.
    static func dimensions(
        of result: Result<Response, CourierError>, context: RequestContext
    ) -> [(String, String)] {
        [
            ("target", context.targetName),
            ("method", context.target.method.rawValue),
            ("status_class", statusClass(of: result)),
            ("outcome", outcome(of: result)),
            ("cache", cache(of: result)),
        ]
    }

    /// `network`, `hit`, `revalidated`, `stale_after_error` or `none`.
    static func cache(of result: Result<Response, CourierError>) -> String {
        let response: Response? =
            switch result {
            case .success(let response): response
            case .failure(let error): error.response
            }
        switch response?.cacheStatus {
        case nil: return "none"
        case .network: return "network"
        case .hit: return "hit"
        case .revalidated: return "revalidated"
        case .staleAfterError: return "stale_after_error"
        }
    }

    /// `1xx`…`5xx`, `other` or `none`.
    static func statusClass(of result: Result<Response, CourierError>) -> String {
        let response: Response? =
            switch result {
            case .success(let response): response
            case .failure(let error): error.response
            }
        guard let code = response?.statusCode else { return "none" }
        return (100..<600).contains(code) ? "\(code / 100)xx" : "other"
    }

    /// `success`, `failure`, `cancelled` or `timeout`.
    static func outcome(of result: Result<Response, CourierError>) -> String {
        switch result {
        case .success: "success"
        case .failure(let error) where error.isCancellation: "cancelled"
        case .failure(let error) where error.isTimeout: "timeout"
        case .failure: "failure"
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : product &+ attoseconds / 1_000_000_000
    }
}

extension Plugin where Self == SwiftMetricsPlugin {
    /// A ``SwiftMetricsPlugin``: every call counted and timed into swift-metrics.
    /// - Parameters:
    ///   - factory: Where metrics go. Default: `MetricsSystem.factory`.
    ///   - labelPrefix: The first word of every label. Default: `"courier"`.
    /// - Returns: The plugin.
    public static func swiftMetrics(
        factory: any MetricsFactory = MetricsSystem.factory, labelPrefix: String = "courier"
    ) -> SwiftMetricsPlugin {
        SwiftMetricsPlugin(factory: factory, labelPrefix: labelPrefix)
    }
}
