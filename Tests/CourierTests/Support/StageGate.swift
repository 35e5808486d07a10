import Courier

/// A point inside a pipeline stage (a mapping, a plugin) where callers wait until the test opens
/// it or their task is cancelled. Lets a test cancel a request at a known stage.
final class StageGate: Sendable {
    private struct State {
        var isOpen = false
        var nextID = 0
        var waiting: [Int: CheckedContinuation<Void, any Error>] = [:]
        var arrivals = 0
        var arrivalWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    /// Waits here until the gate opens; throws `CancellationError` when the task is cancelled.
    func pass() async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case go, cancelled, wait }
                let (outcome, ready): (Outcome, [CheckedContinuation<Void, Never>]) = state.withLock { state in
                    state.arrivals += 1
                    let ready = state.arrivalWaiters.filter { $0.count <= state.arrivals }.map(\.continuation)
                    state.arrivalWaiters.removeAll { $0.count <= state.arrivals }
                    if state.isOpen { return (.go, ready) }
                    if Task.isCancelled { return (.cancelled, ready) }
                    state.waiting[id] = continuation
                    return (.wait, ready)
                }
                ready.forEach { $0.resume() }
                switch outcome {
                case .go: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let continuation = state.withLock { $0.waiting.removeValue(forKey: id) }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Returns once `count` callers have reached the gate.
    func waitForArrivals(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.arrivals >= count { return true }
                state.arrivalWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Lets everyone through, now and later.
    func open() {
        let waiting = state.withLock { state in
            state.isOpen = true
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        waiting.forEach { $0.resume() }
    }
}

/// Waits, without sleeping, until `condition` holds: yields to other tasks between checks and
/// gives up after a bounded number of tries.
func eventually(_ condition: @Sendable () async -> Bool, tries: Int = 1_000_000) async -> Bool {
    for _ in 0..<tries {
        if await condition() { return true }
        await Task.yield()
    }
    return await condition()
}
