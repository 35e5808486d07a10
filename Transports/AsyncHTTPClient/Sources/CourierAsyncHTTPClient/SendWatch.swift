import Foundation
import NIOConcurrencyHelpers

/// The idle timeout while a request body is sent.
///
/// AsyncHTTPClient starts its `read` timeout only once the whole request has been written, and its
/// `write` timeout only while the connection could take more and the body has nothing to give; a
/// server that reads the head, then stops reading the body and never answers, left an upload
/// waiting for ever. A watch ends such an exchange with `URLError(.timedOut)` when, for
/// ``AsyncHTTPClientTransport/sendIdleTimeout``, no part of the body was taken by the connection,
/// no head and no byte of the answer arrived.
///
/// It counts from when the connection first asks for the body (an upload waiting for a connection
/// from the pool is not stalled), rests once the body's last part was taken or a hop has no body
/// to send (AsyncHTTPClient's `read` timeout covers the rest), and counts again with each hop's
/// body (a 307 sends it again). "Moving" is the connection asking for the next part, so the
/// slowest upload it lets through takes one part (64 KiB from memory, 1 MiB from a file) per
/// `sendIdleTimeout`.
final class SendWatch: Sendable {
    private enum State {
        /// Nothing to watch: the connection has not asked for the body yet (it may be waiting
        /// for a connection, which is not a stall), or the body was sent, or this hop has none.
        case resting
        /// The body is going out; when anything last moved (on ``elapsed``'s scale).
        case sending(since: Duration)
    }

    private let state = NIOLockedValueBox(State.resting)
    let idle: Duration
    /// The time since the watch was made, on its clock.
    private let elapsed: @Sendable () -> Duration
    private let sleep: @Sendable (Duration) async throws -> Void

    /// A watch that ends an exchange when nothing moved for `idle` (more than zero) on `clock`
    /// (tests pass one they advance).
    init<C: Clock>(idle: Duration, clock: C = ContinuousClock()) where C.Duration == Duration {
        self.idle = idle
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleep = { try await clock.sleep(for: $0) }
    }

    /// Nothing is watched until the connection asks for a body again: a hop's body is about to
    /// be sent, its last part was taken, or the hop has none.
    func rest() {
        state.withLockedValue { $0 = .resting }
    }

    /// The connection asked for a part of the body (so it took the one before); the watch
    /// counts from now.
    func asked() {
        let now = elapsed()
        state.withLockedValue { $0 = .sending(since: now) }
    }

    /// The head or bytes of the answer arrived: a body still going out counts from now.
    func answered() {
        let now = elapsed()
        state.withLockedValue { state in
            if case .sending = state { state = .sending(since: now) }
        }
    }

    /// What the watcher does next: wait this long, or end the exchange (`nil`).
    private func next() -> Duration? {
        let now = elapsed()
        return state.withLockedValue { state in
            switch state {
            // Looked at again after a while (never in a tight loop, whatever `idle` is).
            case .resting: max(idle, .milliseconds(100))
            case .sending(let since): since + idle > now ? since + idle - now : nil
            }
        }
    }

    /// Runs `operation`, cancelling it when the body stalls; it then ends with
    /// `URLError(.timedOut)`, unless it finished all the same (its result stands: a file it
    /// wrote is the caller's).
    func guarding<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: GuardOutcome<T>.self) { group in
            group.addTask { .finished(try await operation()) }
            group.addTask {
                while let wait = self.next() { try await self.sleep(wait) }
                return .stalled
            }
            var stalled = false
            do {
                while let outcome = try await group.next() {
                    switch outcome {
                    case .finished(let value):
                        group.cancelAll()
                        return value
                    case .stalled:
                        stalled = true
                        group.cancelAll()
                    }
                }
            } catch {
                group.cancelAll()
                // The watcher throws only when cancelled; after a stall, the operation's error
                // is the cancel's.
                throw stalled ? URLError(.timedOut) : error
            }
            // The operation's task either returns or throws.
            throw URLError(.timedOut)
        }
    }
}

/// What finished first in ``SendWatch/guarding(_:)``: the operation, or the watcher.
private enum GuardOutcome<T: Sendable>: Sendable {
    case finished(T)
    case stalled
}
