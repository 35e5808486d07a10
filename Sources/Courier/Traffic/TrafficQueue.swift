/// The state of a provider's traffic control, as a pure state machine: slots in flight per host,
/// the calls waiting for one, and the hosts paused by a `Retry-After`. Events (a call arrives,
/// a call ends, a waiter leaves) return which waiters are granted a slot; the async driver is
/// ``TrafficController``. Times are readings of the provider's clock since it was made.
struct TrafficQueue: Sendable {
    /// A call waiting for a slot.
    struct Waiter: Sendable, Equatable {
        var id: UInt64
        var host: String
        var weight: Int
        var priority: TrafficClass.Priority
        var enqueued: Duration
    }

    /// What ``arrive(_:now:)`` decides.
    enum Arrival: Equatable {
        /// The call has its slot.
        case granted
        /// The call waits; these waiters (the call itself among them, perhaps) were granted.
        case queued(granted: [UInt64])
        /// The queue is full; these waiters were granted (the queue's order can change with
        /// time, as waiters age).
        case full(granted: [UInt64])
    }

    let maxRequests: Int?
    let maxRequestsPerHost: Int?
    let agingInterval: Duration
    let maxQueued: Int
    /// Slots in flight, in weight.
    private(set) var inFlight = 0
    /// Slots in flight per host, in weight; hosts with none are removed. Kept only when there is
    /// a per-host limit (without one, nothing reads it).
    private(set) var perHost: [String: Int] = [:]
    /// How many calls wait for a slot (the sum of the lists' counts, kept as they change).
    private(set) var waitingCount = 0
    /// Waiting calls, one FIFO list per priority (index: the priority's raw value).
    private var queues: [[Waiter]] = Array(repeating: [], count: TrafficClass.Priority.allCases.count)
    /// Until when each paused host is paused; passed pauses are removed as they are seen.
    private var pauses: [String: Duration] = [:]

    init(policy: TrafficPolicy) {
        maxRequests = policy.maxRequests.map { max(1, $0) }
        maxRequestsPerHost = policy.maxRequestsPerHost.map { max(1, $0) }
        agingInterval = policy.agingInterval > .zero ? policy.agingInterval : .nanoseconds(1)
        maxQueued = max(0, policy.maxQueuedRequests)
    }

    /// The weight a request really takes: at most each limit, so that it can ever be granted.
    func effectiveWeight(_ weight: Int) -> Int {
        var weight = max(0, weight)
        // Without a limit a weight weighs nothing against anything: one slot, so that weights in
        // flight cannot add up past `Int.max` (two calls of weight `Int.max` trapped).
        if maxRequests == nil, maxRequestsPerHost == nil { weight = min(weight, 1) }
        if let maxRequests { weight = min(weight, maxRequests) }
        if let maxRequestsPerHost { weight = min(weight, maxRequestsPerHost) }
        return weight
    }

    /// The fast path: when `host` is not paused, nobody waits and the limits allow it, takes the
    /// slot and returns the weight taken; otherwise `nil` (and nothing changes). `now` is read
    /// only when some host is paused.
    mutating func takeAtOnce(host: String, weight: Int, now: @autoclosure () -> Duration) -> Int? {
        if !pauses.isEmpty, pausedUntil(host, now: now()) != nil { return nil }
        let weight = effectiveWeight(weight)
        guard weight > 0 else { return 0 }
        guard waitingCount == 0, inFlight <= (maxRequests ?? Int.max) - weight else { return nil }
        if let maxRequestsPerHost {
            // One lookup of the host for both the check and the update.
            if let index = perHost.index(forKey: host) {
                guard perHost.values[index] <= maxRequestsPerHost - weight else { return nil }
                perHost.values[index] += weight
            } else {
                perHost[host] = weight
            }
        }
        inFlight += weight
        return weight
    }

    /// A call asks for a slot: granted at once when nobody waits and the limits allow it;
    /// otherwise it joins the queue (and is granted at once if the queue's order puts it first).
    mutating func arrive(_ waiter: Waiter, now: Duration) -> Arrival {
        if waitingCount == 0, fits(waiter) {
            take(waiter)
            return .granted
        }
        queues[waiter.priority.rawValue].append(waiter)
        waitingCount += 1
        let granted = grant(now: now)
        // A full queue refuses only a call that would wait: one the queue's order grants at
        // once (its host has room, and no waiter before it fits) is not held up by calls waiting
        // for another host (found by review: a slow host's waiters filling the queue refused
        // calls to idle hosts).
        guard waitingCount > maxQueued, !granted.contains(waiter.id) else { return .queued(granted: granted) }
        let queue = waiter.priority.rawValue
        if let position = queues[queue].lastIndex(where: { $0.id == waiter.id }) {
            queues[queue].remove(at: position)
            waitingCount -= 1
        }
        return .full(granted: granted)
    }

    /// A call with a slot ended: its slot passes on. Returns the waiters granted. `now` is read
    /// only when some call waits.
    mutating func end(host: String, weight: Int, now: @autoclosure () -> Duration) -> [UInt64] {
        inFlight -= weight
        if maxRequestsPerHost != nil, let index = perHost.index(forKey: host) {
            // One lookup of the host.
            if perHost.values[index] > weight {
                perHost.values[index] -= weight
            } else {
                perHost.remove(at: index)
            }
        }
        return waitingCount == 0 ? [] : grant(now: now())
    }

    /// A waiter leaves (cancelled, deadline passed). Returns whether it was waiting, and the
    /// waiters granted now that it no longer blocks them.
    mutating func leave(_ id: UInt64, now: Duration) -> (left: Bool, granted: [UInt64]) {
        for index in queues.indices {
            if let position = queues[index].firstIndex(where: { $0.id == id }) {
                queues[index].remove(at: position)
                waitingCount -= 1
                return (true, grant(now: now))
            }
        }
        return (false, [])
    }

    /// Pauses new sends to `host` until `until` (never shortens a pause already set).
    mutating func pause(_ host: String, until: Duration, now: Duration) {
        pauses = pauses.filter { $0.value > now }
        pauses[host] = max(pauses[host] ?? .zero, until)
    }

    /// Until when `host` is paused, if it is paused at `now`.
    mutating func pausedUntil(_ host: String, now: Duration) -> Duration? {
        guard let until = pauses[host] else { return nil }
        if until > now { return until }
        pauses[host] = nil
        return nil
    }

    private func fits(_ waiter: Waiter) -> Bool {
        if let maxRequests, inFlight + waiter.weight > maxRequests { return false }
        if let maxRequestsPerHost, (perHost[waiter.host] ?? 0) + waiter.weight > maxRequestsPerHost { return false }
        return true
    }

    private mutating func take(_ waiter: Waiter) {
        inFlight += waiter.weight
        if maxRequestsPerHost != nil { perHost[waiter.host, default: 0] += waiter.weight }
    }

    /// The oldest waiter of a queue whose host has room for it, skipping hosts in `held`. A
    /// waiter whose host has no room holds its host for the waiters after it, in its queue and
    /// in the queues of lower priority: lighter calls to the same host passed a heavy one for as
    /// long as they kept coming (found by review).
    private func firstWithRoom(in queue: [Waiter], held: inout Set<String>) -> Int? {
        guard let limit = maxRequestsPerHost else { return queue.isEmpty ? nil : 0 }
        for (position, waiter) in queue.enumerated() where !held.contains(waiter.host) {
            if (perHost[waiter.host] ?? 0) + waiter.weight <= limit { return position }
            held.insert(waiter.host)
        }
        return nil
    }

    /// Grants slots in queue order while the first in order fits: per priority, the oldest waiter
    /// whose host has room; among those, the one whose priority, raised one step per
    /// ``agingInterval`` waited, is highest, the oldest on a tie. The first in order that does not
    /// fit the total stops the grants, so that light requests cannot starve a heavy one.
    private mutating func grant(now: Duration) -> [UInt64] {
        var granted: [UInt64] = []
        while true {
            var best: (queue: Int, position: Int, rank: Int, id: UInt64)?
            var held: Set<String> = []
            for index in queues.indices {
                guard let position = firstWithRoom(in: queues[index], held: &held) else { continue }
                let waiter = queues[index][position]
                let steps = Int(min((now - waiter.enqueued) / agingInterval, Double(index)))
                let rank = index - max(0, steps)
                if let current = best, current.rank < rank || (current.rank == rank && current.id < waiter.id) {
                    continue
                }
                best = (index, position, rank, waiter.id)
            }
            guard let best else { return granted }
            let waiter = queues[best.queue][best.position]
            guard fits(waiter) else { return granted }
            queues[best.queue].remove(at: best.position)
            waitingCount -= 1
            take(waiter)
            granted.append(waiter.id)
        }
    }
}
