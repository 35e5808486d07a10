import Foundation

/// Schedules deadlines for one provider on its clock.
protocol DeadlineScheduling: Sendable {
    /// Calls `fire` once `duration` has passed, unless ``cancel(_:)`` comes first. Returns the
    /// deadline's identity.
    func schedule(after duration: Duration, _ fire: @escaping @Sendable () -> Void) -> UInt64
    /// Forgets a deadline; its closure is released at once.
    func cancel(_ id: UInt64)
}

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
        /// When the sleeper for the earliest deadline wakes, if one is sleeping.
        var sleeperWake: C.Instant?
        /// Sleepers still sleeping, by number.
        var sleepers: [UInt64: Task<Void, Never>] = [:]
        /// Sleepers that ended before they could be recorded.
        var endedSleepers: Set<UInt64> = []
        var nextSleeper: UInt64 = 0
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
        let (id, startSleeper) = state.withLock { state -> (UInt64, Bool) in
            state.nextID += 1
            let id = state.nextID
            state.heap.insert(id: id, at: instant)
            state.actions[id] = fire
            guard state.sleeperWake.map({ instant < $0 }) ?? true else { return (id, false) }
            state.sleeperWake = instant
            return (id, true)
        }
        if startSleeper { sleep(until: instant) }
        return id
    }

    /// Deadlines scheduled and neither fired nor cancelled.
    var pendingCount: Int { state.withLock { $0.actions.count } }

    func cancel(_ id: UInt64) {
        state.withLock { state in
            if state.actions.removeValue(forKey: id) != nil { state.heap.remove(id: id) }
        }
    }

    private func sleep(until instant: C.Instant) {
        let number = state.withLock { state in
            state.nextSleeper += 1
            return state.nextSleeper
        }
        let sleeper = Task { [weak self, clock] in
            try? await clock.sleep(until: instant, tolerance: nil)
            guard let self else { return }
            self.state.withLock { state in
                if state.sleepers.removeValue(forKey: number) == nil { state.endedSleepers.insert(number) }
            }
            self.fireDue(wokeFor: instant)
        }
        state.withLock { state in
            if state.endedSleepers.remove(number) == nil { state.sleepers[number] = sleeper }
        }
    }

    private func fireDue(wokeFor wake: C.Instant) {
        let now = clock.now
        let (due, next) = state.withLock { state -> ([@Sendable () -> Void], C.Instant?) in
            var due: [@Sendable () -> Void] = []
            while let (id, instant) = state.heap.min, instant <= now {
                state.heap.remove(id: id)
                if let action = state.actions.removeValue(forKey: id) { due.append(action) }
            }
            if state.sleeperWake == wake { state.sleeperWake = nil }
            guard state.sleeperWake == nil, let (_, earliest) = state.heap.min else { return (due, nil) }
            state.sleeperWake = earliest
            return (due, earliest)
        }
        for action in due { action() }
        if let next { sleep(until: next) }
    }
}

/// A binary min-heap of deadlines that can remove any entry by its id in O(log n).
struct DeadlineHeap<Instant: Comparable & Sendable>: Sendable {
    private var items: [(id: UInt64, instant: Instant)] = []
    private var positions: [UInt64: Int] = [:]

    var min: (UInt64, Instant)? { items.first.map { ($0.id, $0.instant) } }
    var count: Int { items.count }

    mutating func insert(id: UInt64, at instant: Instant) {
        items.append((id, instant))
        positions[id] = items.count - 1
        siftUp(items.count - 1)
    }

    mutating func remove(id: UInt64) {
        guard let index = positions.removeValue(forKey: id) else { return }
        let last = items.count - 1
        if index != last {
            items.swapAt(index, last)
            positions[items[index].id] = index
        }
        items.removeLast()
        guard index < items.count else { return }
        siftDown(index)
        siftUp(index)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].instant < items[parent].instant else { return }
            swap(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, items[left].instant < items[smallest].instant { smallest = left }
            if right < items.count, items[right].instant < items[smallest].instant { smallest = right }
            guard smallest != parent else { return }
            swap(parent, smallest)
            parent = smallest
        }
    }

    private mutating func swap(_ a: Int, _ b: Int) {
        items.swapAt(a, b)
        positions[items[a].id] = a
        positions[items[b].id] = b
    }
}

/// Races an operation against a deadline and against the caller's cancellation, and answers the
/// caller with whichever comes first, without waiting for an operation that ignores cancellation
/// (a mapping or plugin that never returns): it is cancelled and left to end on its own.
enum Deadline {
    /// - Parameter discarded: Called with the operation's value when it arrives after the caller
    ///   was answered otherwise, to release what it holds (a downloaded file).
    static func run<T: Sendable>(
        within duration: Duration, timer: any DeadlineScheduling,
        discarded: (@Sendable (T) -> Void)? = nil,
        _ operation: @escaping @Sendable () async -> Result<T, CourierError>
    ) async -> Result<T, CourierError> {
        let race = DeadlineRace<T>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                race.begin(continuation)
                let id = timer.schedule(after: duration) {
                    race.finish(.failure(.timedOut(duration)))
                }
                race.started(
                    Task {
                        let result = await operation()
                        timer.cancel(id)
                        if !race.finish(result), case .success(let value) = result { discarded?(value) }
                    }, timer: timer, deadline: id)
            }
        } onCancel: {
            race.finish(.failure(.cancelled))
        }
    }
}

/// The state of one ``Deadline`` race: the caller's answer, given once, and the operation's task
/// and deadline, cancelled when the caller is answered by anything else.
private final class DeadlineRace<T: Sendable>: Sendable {
    private let answer = FirstResult<Result<T, CourierError>>()
    private let running = Locked<(task: Task<Void, Never>, timer: any DeadlineScheduling, deadline: UInt64)?>(nil)

    func begin(_ continuation: CheckedContinuation<Result<T, CourierError>, Never>) {
        answer.begin(continuation)
    }

    func started(_ task: Task<Void, Never>, timer: any DeadlineScheduling, deadline: UInt64) {
        running.withLock { $0 = (task, timer, deadline) }
        if answer.isFinished { stop() }
    }

    /// Answers the caller with `result` unless it was answered already; returns whether it was this.
    @discardableResult
    func finish(_ result: Result<T, CourierError>) -> Bool {
        guard answer.finish(result) else { return false }
        stop()
        return true
    }

    private func stop() {
        guard let (task, timer, deadline) = running.withLock({ $0 }) else { return }
        task.cancel()
        timer.cancel(deadline)
    }
}
