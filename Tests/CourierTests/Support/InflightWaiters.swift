import Foundation

@testable import Courier

extension Provider {
    /// Returns once at least `count` callers wait on shared requests: a signal (the provider's
    /// `inflightWaitersJoined` seam), instead of polling ``inflightWaiterCount``.
    func waitForInflightWaiters(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if inflightWaiterCount >= count {
                continuation.resume()
                return
            }
            let signal = WaiterSignal(count: count, continuation: continuation)
            let earlier = inflightWaitersJoined
            inflightWaitersJoined = { waiting in
                earlier?(waiting)
                signal.check(waiting)
            }
        }
    }
}

/// One test waiting for a number of in-flight waiters; resumed once.
private final class WaiterSignal: Sendable {
    private let continuation: Locked<CheckedContinuation<Void, Never>?>
    private let count: Int

    init(count: Int, continuation: CheckedContinuation<Void, Never>) {
        self.count = count
        self.continuation = Locked(continuation)
    }

    func check(_ waiting: Int) {
        guard waiting >= count else { return }
        let resumed = continuation.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = nil }
            return state
        }
        resumed?.resume()
    }
}
