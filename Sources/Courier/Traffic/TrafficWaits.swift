/// One attempt's waits in the traffic queue and for a host's pause, for its
/// ``RequestMetrics/Attempt``. The attempt binds one to the task (the exchange may run in a task
/// of its own: a deadline's, or a request shared with identical callers); the exchange adds to it.
final class TrafficWaits: Sendable {
    /// The waits of the attempt running on this task, if traffic control is on.
    @TaskLocal static var current: TrafficWaits?

    private let waits = Locked((queue: Duration.zero, pause: Duration.zero))

    /// Adds an admission's waits.
    func add(_ admission: TrafficController.Admission) {
        guard admission.queueWait > .zero || admission.pauseWait > .zero else { return }
        waits.withLock {
            $0.queue += admission.queueWait
            $0.pause += admission.pauseWait
        }
    }

    /// The waits so far.
    var values: (queue: Duration, pause: Duration) { waits.withLock { $0 } }
}

/// How long one attempt waited for traffic control (``RequestMetrics/trafficWaits``), within its
/// ``RequestMetrics/Attempt/start``…``RequestMetrics/Attempt/end``.
public struct TrafficWait: Sendable, Hashable {
    /// The attempt's ``RequestMetrics/Attempt/number``.
    public var attempt: Int
    /// How long it waited for a slot in the queue.
    public var queue: Duration
    /// How long it waited for its host's shared pause (a `Retry-After` seen by any caller) to pass.
    public var pause: Duration
}

extension RequestMetrics {
    /// Records the last attempt's queue and pause waits, if it waited.
    mutating func recordTraffic(_ waits: TrafficWaits?) {
        guard let waits, let attempt = attempts.last?.number else { return }
        let (queue, pause) = waits.values
        guard queue > .zero || pause > .zero else { return }
        trafficWaits.append(TrafficWait(attempt: attempt, queue: queue, pause: pause))
    }

    /// Time in the traffic queue, over all attempts.
    public var queueWait: Duration { trafficWaits.reduce(.zero) { $0 + $1.queue } }
    /// Time waiting for hosts' shared pauses, over all attempts.
    public var pauseWait: Duration { trafficWaits.reduce(.zero) { $0 + $1.pause } }
}
