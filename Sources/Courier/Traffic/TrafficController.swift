import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Runs a provider's ``TrafficQueue``: callers wait here for a slot and for a host's pause, and
/// give their slot back when their exchange (and a streamed body) ends.
///
/// The queue sits behind a lock rather than in the provider actor for two reasons: a waiter that
/// is cancelled must leave the queue from its task's cancellation handler, which is synchronous;
/// and a streamed body gives its slot back from the body's end handler, also synchronous. A call
/// that finds a free slot takes the lock once to get it and once to give it back (no suspension).
final class TrafficController: Sendable {
    /// A slot held by one exchange (or no slot, for an exempt request).
    struct Admission: Sendable {
        var host: String
        var weight: Int
        var queueWait: Duration = .zero
        var pauseWait: Duration = .zero
    }

    private struct State: Sendable {
        var queue: TrafficQueue
        var waiting: [UInt64: CheckedContinuation<SlotOutcome, Never>] = [:]
        var nextID: UInt64 = 0
        /// Tests waiting for a state of the queue (``waitFor(_:)``).
        var signals: [(condition: @Sendable (Int, Int) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

        /// The signals whose condition now holds, removed.
        mutating func ready() -> [CheckedContinuation<Void, Never>] {
            guard !signals.isEmpty else { return [] }
            let (waiting, inFlight) = (queue.waitingCount, queue.inFlight)
            let ready = signals.filter { $0.condition(waiting, inFlight) }.map(\.continuation)
            signals.removeAll { $0.condition(waiting, inFlight) }
            return ready
        }
    }

    let policy: TrafficPolicy
    private let clock: any Clock<Duration>
    private let elapsed: @Sendable () -> Duration
    private let state: Locked<State>

    init(policy: TrafficPolicy, clock: any Clock<Duration>, elapsed: @escaping @Sendable () -> Duration) {
        self.policy = policy
        self.clock = clock
        self.elapsed = elapsed
        self.state = Locked(State(queue: TrafficQueue(policy: policy)))
    }

    /// How many calls wait for a slot.
    var waitingCount: Int { state.withLock { $0.queue.waitingCount } }
    /// Slots in flight, in weight.
    var inFlight: Int { state.withLock { $0.queue.inFlight } }

    /// Returns once `condition(waiting, inFlight)` holds: how many calls wait for a slot, and the
    /// slots in flight (in weight). For tests, which wait for a known state instead of sleeping.
    func waitFor(_ condition: @escaping @Sendable (_ waiting: Int, _ inFlight: Int) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = state.withLock { state in
                if condition(state.queue.waitingCount, state.queue.inFlight) { return true }
                state.signals.append((condition, continuation))
                return false
            }
            if holds { continuation.resume() }
        }
    }

    /// `scheme://host:port` of a request, the port filled in from the scheme.
    static func hostKey(of url: URL?) -> String {
        guard let url, let scheme = url.scheme?.lowercased() else { return "" }
        let host = url.host?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" || scheme == "wss" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }

    /// Waits until `host` is not paused and a slot is free, then takes the slot.
    /// - Throws: ``CourierError/cancelled`` when the task is cancelled while it waits (it holds
    ///   nothing then), ``CourierError/limitExceeded(_:)`` when the queue is full.
    func admit(host: String, traffic: TrafficClass) async throws(CourierError) -> Admission {
        let now = elapsed()
        if let weight = state.withLock({ $0.queue.takeAtOnce(host: host, weight: traffic.weight, now: now) }) {
            return Admission(host: host, weight: weight)
        }
        return try await admitWaiting(host: host, traffic: traffic)
    }

    /// The slow path of ``admit(host:traffic:)``: a pause to wait for, or a queue.
    private func admitWaiting(host: String, traffic: TrafficClass) async throws(CourierError) -> Admission {
        var admission = Admission(host: host, weight: 0)
        while true {
            let now = elapsed()
            if let until = state.withLock({ $0.queue.pausedUntil(host, now: now) }) {
                do {
                    try await clock.sleep(for: (until - now).sleepable)
                } catch {
                    throw .cancelled
                }
                admission.pauseWait += elapsed() - now
                continue
            }
            if Task.isCancelled { throw .cancelled }
            admission.weight = state.withLock { $0.queue.effectiveWeight(traffic.weight) }
            if admission.weight > 0 {
                let granted = try await slot(host: host, weight: admission.weight, priority: traffic.priority)
                admission.queueWait += granted
            }
            // A pause that began while it waited: the slot goes back, and it waits for the pause.
            let after = elapsed()
            if state.withLock({ $0.queue.pausedUntil(host, now: after) }) != nil {
                release(admission)
                continue
            }
            return admission
        }
    }

    /// Gives the slot back; the next waiters in order get theirs.
    func release(_ admission: Admission) {
        guard admission.weight > 0 else { return }
        let now = elapsed()
        let (granted, ready) = state.withLock { state in
            let granted = Self.claim(
                state.queue.end(host: admission.host, weight: admission.weight, now: now), from: &state)
            return (granted, state.ready())
        }
        for continuation in granted { continuation.resume(returning: .granted) }
        for signal in ready { signal.resume() }
    }

    /// A response that asks the client to wait (429 or 503 with `Retry-After`) pauses its host for
    /// every caller, up to ``TrafficPolicy/maxPause``.
    func observe(_ response: Response, host: String) {
        guard response.statusCode == 429 || response.statusCode == 503, let maxPause = policy.maxPause,
            maxPause > .zero, let header = response.value(forHTTPHeaderField: "Retry-After"),
            let wait = RetryPolicy.retryAfter(header, now: Date()), wait > .zero
        else { return }
        let now = elapsed()
        let until = now + min(wait, maxPause)
        state.withLock { $0.queue.pause(host, until: until, now: now) }
    }

    /// How a wait for a slot ended.
    enum SlotOutcome: Sendable {
        /// Granted without waiting.
        case immediate
        /// Granted after waiting.
        case granted
        /// Left the queue, cancelled.
        case cancelled
        /// The queue was full.
        case full
    }

    /// What a step on the queue answers: the caller's own outcome (if known now), the granted
    /// waiters to resume, the test signals to resume.
    private typealias Arrived = (
        SlotOutcome?, [CheckedContinuation<SlotOutcome, Never>], [CheckedContinuation<Void, Never>]
    )

    /// What a waiter that leaves the queue answers: itself, the waiters granted now, the signals.
    private struct Left {
        var mine: CheckedContinuation<SlotOutcome, Never>
        var granted: [CheckedContinuation<SlotOutcome, Never>]
        var ready: [CheckedContinuation<Void, Never>]
    }

    /// Waits for a slot; returns how long it waited.
    private func slot(
        host: String, weight: Int, priority: TrafficClass.Priority
    ) async throws(CourierError)
        -> Duration
    {
        let begun = elapsed()
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let waiter = TrafficQueue.Waiter(id: id, host: host, weight: weight, priority: priority, enqueued: begun)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SlotOutcome, Never>) in
                let (answer, others, ready) = state.withLock { state -> Arrived in
                    // Checked under the lock: a cancellation handler that ran before found nothing.
                    if Task.isCancelled { return (SlotOutcome.cancelled, [], []) }
                    switch state.queue.arrive(waiter, now: begun) {
                    case .granted:
                        return (.immediate, [], state.ready())
                    case .full:
                        return (.full, [], [])
                    case .queued(let granted):
                        state.waiting[id] = continuation
                        return (nil, Self.claim(granted, from: &state), state.ready())
                    }
                }
                if let answer { continuation.resume(returning: answer) }
                for other in others { other.resume(returning: .granted) }
                for signal in ready { signal.resume() }
            }
        } onCancel: {
            let now = elapsed()
            let left = state.withLock { state -> Left? in
                guard let mine = state.waiting.removeValue(forKey: id) else { return nil }
                let (_, granted) = state.queue.leave(id, now: now)
                return Left(mine: mine, granted: Self.claim(granted, from: &state), ready: state.ready())
            }
            guard let left else { return }
            left.mine.resume(returning: .cancelled)
            for continuation in left.granted { continuation.resume(returning: .granted) }
            for signal in left.ready { signal.resume() }
        }
        switch outcome {
        case .full:
            throw .limitExceeded(.trafficQueue(limit: policy.maxQueuedRequests))
        case .cancelled:
            throw .cancelled
        case .immediate, .granted:
            if Task.isCancelled {
                // Granted as it was cancelled: the slot passes on unused.
                release(Admission(host: host, weight: weight))
                throw .cancelled
            }
            return outcome == .immediate ? .zero : elapsed() - begun
        }
    }

    /// The continuations of the granted waiters, removed from the table.
    private static func claim(_ ids: [UInt64], from state: inout State) -> [CheckedContinuation<SlotOutcome, Never>] {
        ids.compactMap { state.waiting.removeValue(forKey: $0) }
    }
}
