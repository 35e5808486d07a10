import Foundation

/// Tasks waiting until a condition on some locked state holds: tests waiting for a known state
/// instead of sleeping (CourierTesting's `TestClock.waitForSleepers`,
/// `GatedTransport.waitForRequests`, `ReplayTransport.waitForRecordings`, and the traffic
/// controller's `waitFor`). Each is answered once: when its condition holds, or at once when its
/// task is cancelled, so a test past its time limit fails instead of hanging CI.
///
/// It lives in the owner's state, behind the owner's lock, so a condition is checked and a waiter
/// stored in the same step as the change that makes it hold: no wake-up is lost.
package struct ConditionWaiters<Condition: Sendable>: Sendable {
    private var nextID = 0

    package init() {}
    private var entries: [(id: Int, condition: Condition, continuation: CheckedContinuation<Void, Never>)] = []

    /// How many tasks are waiting.
    package var count: Int { entries.count }

    /// Removes the waiters whose condition now holds and returns them, to be resumed outside the
    /// lock.
    package mutating func ready(_ holds: (Condition) -> Bool) -> [CheckedContinuation<Void, Never>] {
        // Nobody waits, as outside tests: nothing to check (the traffic queue calls this for
        // every slot it grants).
        guard !entries.isEmpty else { return [] }
        var ready: [CheckedContinuation<Void, Never>] = []
        entries.removeAll { entry in
            guard holds(entry.condition) else { return false }
            ready.append(entry.continuation)
            return true
        }
        return ready
    }

    fileprivate mutating func reserveID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    fileprivate mutating func add(_ id: Int, _ condition: Condition, _ continuation: CheckedContinuation<Void, Never>) {
        entries.append((id, condition, continuation))
    }

    fileprivate mutating func remove(_ id: Int) -> CheckedContinuation<Void, Never>? {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { return nil }
        return entries.remove(at: index).continuation
    }
}

extension Locked {
    /// Returns once `holds(state, condition)` is true: checked now, and again each time the state's
    /// owner calls ``ConditionWaiters/ready(_:)`` on `waiters` after a change. Returns at once when
    /// the calling task is cancelled, before or while it waits.
    package func wait<Condition: Sendable>(
        in waiters: WritableKeyPath<Value, ConditionWaiters<Condition>> & Sendable,
        for condition: Condition, until holds: (Value, Condition) -> Bool
    ) async {
        let id = withLock { $0[keyPath: waiters].reserveID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = withLock { state in
                    // Read under the lock: a cancel after this finds the waiter stored.
                    if Task.isCancelled || holds(state, condition) { return true }
                    state[keyPath: waiters].add(id, condition, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            withLock { $0[keyPath: waiters].remove(id) }?.resume()
        }
    }
}
