import Foundation

/// Every deadline of a provider on one timer: a heap of deadlines ordered by instant and, at any
/// time, one sleeping task for the earliest.
///
/// A sleeping task per request would keep its memory (~740 bytes) until its deadline, even after
/// the request ended and the sleep was cancelled, because the runtime keeps a cancelled sleep's
/// timer until it is due: 200,000 requests with a 10 s deadline held 144 MB for 10 s. Here a
/// request that ends removes its deadline at once, and sleepers are only started for a new
/// earliest deadline, so they are few however many requests run.
///
/// The state is touched from the caller's task and from the sleeper, both synchronously, so it sits
/// behind ``Locked`` rather than in an actor: scheduling must not suspend the request. Sleepers hold
/// the timer weakly, and a timer that is released (with its provider) cancels the sleepers it
/// still has, so none waits on a clock that may never advance (a test clock).
final class DeadlineTimer<C: Clock<Duration>>: DeadlineScheduling {
    private struct State: Sendable {
        var heap = DeadlineHeap<C.Instant>()
        var actions: [UInt64: @Sendable () -> Void] = [:]
        var nextID: UInt64 = 0
        /// When each sleeper still sleeping wakes, by number.
        var wakes: [UInt64: C.Instant] = [:]
        /// The earliest of ``wakes``.
        var earliestWake: C.Instant?
        /// Sleepers still sleeping, by number.
        var sleepers: [UInt64: Task<Void, Never>] = [:]
        /// Sleepers that ended before they could be recorded.
        var endedSleepers: Set<UInt64> = []
        var nextSleeper: UInt64 = 0

        /// A new sleeper's number, for a deadline at `instant` that no sleeper wakes for in time;
        /// `nil` when one does. A sleeper that wakes later is not cancelled (the runtime keeps a
        /// cancelled sleep until it is due anyway): it stays for the deadline it slept for, and
        /// none is started for that deadline again (found by review: each earlier deadline that
        /// came and went left one more sleeper for the later one).
        mutating func sleeper(for instant: C.Instant) -> UInt64? {
            if let earliestWake, earliestWake <= instant { return nil }
            nextSleeper += 1
            wakes[nextSleeper] = instant
            earliestWake = instant
            return nextSleeper
        }
    }

    private let clock: C
    private let state = Locked(State())

    init(clock: C) {
        self.clock = clock
    }

    deinit {
        for sleeper in state.withLock({ $0.sleepers.values }) { sleeper.cancel() }
    }

    func schedule(after duration: Duration, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
        let instant = clock.now.advanced(by: duration.sleepable)
        let (id, sleeper) = state.withLock { state -> (UInt64, UInt64?) in
            state.nextID += 1
            let id = state.nextID
            state.heap.insert(id: id, at: instant)
            state.actions[id] = fire
            return (id, state.sleeper(for: instant))
        }
        if let sleeper { sleep(sleeper, until: instant) }
        return id
    }

    /// Sleepers sleeping now.
    /// Test-only, kept: it reads the locked table, which no seam outside the type can reach.
    var sleepingCount: Int { state.withLock { $0.wakes.count } }

    /// Deadlines scheduled and neither fired nor cancelled.
    /// Test-only, kept: it reads the locked table, which no seam outside the type can reach.
    var pendingCount: Int { state.withLock { $0.actions.count } }

    func cancel(_ id: UInt64) {
        state.withLock { state in
            if state.actions.removeValue(forKey: id) != nil { state.heap.remove(id: id) }
        }
    }

    private func sleep(_ number: UInt64, until instant: C.Instant) {
        let sleeper = Task { [weak self, clock] in
            try? await clock.sleep(until: instant, tolerance: nil)
            guard let self else { return }
            self.state.withLock { state in
                if state.sleepers.removeValue(forKey: number) == nil { state.endedSleepers.insert(number) }
            }
            self.fireDue(sleeper: number)
        }
        state.withLock { state in
            if state.endedSleepers.remove(number) == nil { state.sleepers[number] = sleeper }
        }
    }

    private func fireDue(sleeper number: UInt64) {
        let now = clock.now
        let (due, next) = state.withLock { state -> ([@Sendable () -> Void], (UInt64, C.Instant)?) in
            var due: [@Sendable () -> Void] = []
            while let (id, instant) = state.heap.min, instant <= now {
                state.heap.remove(id: id)
                if let action = state.actions.removeValue(forKey: id) { due.append(action) }
            }
            if let wake = state.wakes.removeValue(forKey: number), wake == state.earliestWake {
                state.earliestWake = state.wakes.values.min()
            }
            guard let (_, earliest) = state.heap.min, let sleeper = state.sleeper(for: earliest) else {
                return (due, nil)
            }
            return (due, (sleeper, earliest))
        }
        for action in due { action() }
        if let (sleeper, instant) = next { sleep(sleeper, until: instant) }
    }
}
