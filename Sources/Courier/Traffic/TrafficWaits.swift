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

extension RequestMetrics {
    /// Sets the last attempt's queue and pause waits.
    mutating func recordTraffic(_ waits: TrafficWaits?) {
        guard let waits else { return }
        let (queue, pause) = waits.values
        guard queue > .zero || pause > .zero else { return }
        var all = attempts
        guard !all.isEmpty else { return }
        all[all.count - 1].queueWait = queue
        all[all.count - 1].pauseWait = pause
        attempts = all
    }

    /// Time in the traffic queue, over all attempts.
    public var queueWait: Duration { attempts.reduce(.zero) { $0 + $1.queueWait } }
    /// Time waiting for hosts' shared pauses, over all attempts.
    public var pauseWait: Duration { attempts.reduce(.zero) { $0 + $1.pauseWait } }
}
