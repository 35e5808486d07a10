/// One attempt's waits in the traffic queue and for a host's pause, for its
/// ``RequestMetrics/Attempt``. The admission adds to it, and it travels back with the exchange's
/// answer (in the pipeline's `Exchanged`): no object and no task-local per attempt. An exchange
/// on a task of its own (a deadline's, or a request shared with identical callers) hands its
/// waits back through a `Locked` box made for that attempt, read when the attempt is answered (an
/// admission that ends after that, its caller gone, is not counted, as before).
struct TrafficWaits: Sendable {
    var queue: Duration = .zero
    var pause: Duration = .zero

    /// Adds an admission's waits.
    mutating func add(_ admission: TrafficController.Admission) {
        queue += admission.queueWait
        pause += admission.pauseWait
    }

    /// Adds another exchange's waits.
    mutating func add(_ other: TrafficWaits) {
        queue += other.queue
        pause += other.pause
    }
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
    mutating func recordTraffic(_ waits: TrafficWaits) {
        guard waits.queue > .zero || waits.pause > .zero, let attempt = attempts.last?.number else { return }
        trafficWaits.append(TrafficWait(attempt: attempt, queue: waits.queue, pause: waits.pause))
    }

    /// Time in the traffic queue, over all attempts.
    public var queueWait: Duration { trafficWaits.reduce(.zero) { $0 + $1.queue } }
    /// Time waiting for hosts' shared pauses, over all attempts.
    public var pauseWait: Duration { trafficWaits.reduce(.zero) { $0 + $1.pause } }
}
