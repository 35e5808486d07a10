import CoreMetrics
import Foundation

/// A swift-metrics factory that keeps every value recorded, per label and dimensions, for tests.
// @unchecked and a lock: swift-metrics' handlers are called synchronously, from any thread.
final class InMemoryMetrics: MetricsFactory, @unchecked Sendable {
    /// A metric's identity: its label and its dimensions, in order.
    struct Key: Hashable {
        var label: String
        var dimensions: [String]

        init(_ label: String, _ dimensions: [(String, String)]) {
            self.label = label
            self.dimensions = dimensions.map { "\($0.0)=\($0.1)" }
        }
    }

    private let lock = NSLock()
    private var values: [Key: [Int64]] = [:]
    private var doubles: [Key: [Double]] = [:]

    /// Every integer recorded under this key (a counter's increments, a timer's nanoseconds).
    func values(_ label: String, _ dimensions: [(String, String)]) -> [Int64] {
        lock.withLock { values[Key(label, dimensions)] ?? [] }
    }

    /// Every value a recorder was given under this key.
    func recorded(_ label: String, _ dimensions: [(String, String)]) -> [Double] {
        lock.withLock { doubles[Key(label, dimensions)] ?? [] }
    }

    /// Every label recorded under, with its dimensions.
    var keys: Set<Key> { lock.withLock { Set(values.keys).union(doubles.keys) } }

    fileprivate func append(_ value: Int64, _ key: Key) { lock.withLock { values[key, default: []].append(value) } }
    fileprivate func append(_ value: Double, _ key: Key) { lock.withLock { doubles[key, default: []].append(value) } }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        Handler(metrics: self, key: Key(label, dimensions))
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        Handler(metrics: self, key: Key(label, dimensions))
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        Handler(metrics: self, key: Key(label, dimensions))
    }

    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}

    /// One handler type for every kind: it appends to the factory's store.
    final class Handler: CounterHandler, RecorderHandler, TimerHandler {
        let metrics: InMemoryMetrics
        let key: Key

        init(metrics: InMemoryMetrics, key: Key) {
            self.metrics = metrics
            self.key = key
        }

        func increment(by amount: Int64) { metrics.append(amount, key) }
        func reset() {}
        func record(_ value: Int64) { metrics.append(Double(value), key) }
        func record(_ value: Double) { metrics.append(value, key) }
        func recordNanoseconds(_ duration: Int64) { metrics.append(duration, key) }
    }
}
