// Courier into swift-log and swift-metrics through the CourierLogging and CourierMetrics products
// (the Integrations package).
import CoreMetrics
import Courier
import CourierLogging
import CourierMetrics
import Logging

/// A provider whose calls are logged into `logger` and counted and timed into `metrics`.
///
/// ```swift
/// let provider: Provider<GitHub> = observedProvider(logger: Logger(label: "github"))
/// ```
func observedProvider<Target: TargetType>(
    logger: Logger, metrics: any MetricsFactory = MetricsSystem.factory,
    stubClosure: @escaping Provider<Target>.StubClosure = Provider<Target>.neverStub
) -> Provider<Target> {
    Provider(stubClosure: stubClosure, plugins: [.swiftLog(logger, level: .info), .swiftMetrics(factory: metrics)])
}
