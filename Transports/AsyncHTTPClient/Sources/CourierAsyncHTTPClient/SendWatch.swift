import Foundation
import NIOConcurrencyHelpers

/// The idle timeout while a request body is sent.
///
/// AsyncHTTPClient starts its `read` timeout only once the request's end is handed to the
/// connection, and its `write` timeout only while the connection could take more and the body has
/// nothing to give; a server that reads the head, then stops reading the body and never answers,
/// left an upload waiting for ever. A watch ends such an exchange with `URLError(.timedOut)` when, for
/// ``AsyncHTTPClientTransport/sendIdleTimeout``, no part of the body was taken by the connection,
/// no head and no byte of the answer arrived.
///
/// It counts from when the connection first asks for the body (an upload waiting for a connection
/// from the pool is not stalled), rests once the body's last part was taken or a hop has no body
/// to send (AsyncHTTPClient's `read` timeout covers the rest), and counts again with each hop's
/// body (a 307 sends it again). "Moving" is the connection asking for the next part, so the
/// slowest upload it lets through takes one part (64 KiB from memory, 1 MiB from a file) per
/// `sendIdleTimeout`. Asking is taking, to within 8 MiB, only because ``Pacing`` keeps the body
/// from running ahead of the connection's event loop: AsyncHTTPClient alone asks again before the
/// loop has written.
final class SendWatch: Sendable {
    private enum Phase {
        /// Nothing to watch: the connection has not asked for the body yet (it may be waiting
        /// for a connection, which is not a stall), or the body was sent, or this hop has none.
        case resting
        /// The body is going out; when anything last moved (on ``elapsed``'s scale).
        case sending(since: Duration)
    }

    private struct State {
        var phase = Phase.resting
        /// The hop whose body is watched: a body's calls from an earlier hop (AsyncHTTPClient
        /// runs a body in a task of its own, which may still be asking after the answer came)
        /// change nothing.
        var hop = 0
    }

    private let state = NIOLockedValueBox(State())
    let idle: Duration
    /// The time since the watch was made, on its clock.
    private let elapsed: @Sendable () -> Duration
    /// Sleeps until that time since the watch was made (a deadline, so no drift).
    private let sleep: @Sendable (Duration) async throws -> Void

    /// A watch that ends an exchange when nothing moved for `idle` (more than zero) on `clock`
    /// (tests pass one they advance).
    init<C: Clock>(idle: Duration, clock: C = ContinuousClock()) where C.Duration == Duration {
        self.idle = idle
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleep = { try await clock.sleep(until: start.advanced(by: $0), tolerance: nil) }
    }

    /// The first hop's number, for its body's calls.
    static let firstHop = 0

    /// What one hop's body tells the watch, under that hop's number.
    struct Mark: Sendable {
        let watch: SendWatch
        let hop: Int

        /// See ``SendWatch/asked(hop:)``.
        func asked() { watch.asked(hop: hop) }
        /// See ``SendWatch/sent(hop:)``.
        func sent() { watch.sent(hop: hop) }
    }

    /// A later hop begins: the watch rests until its body starts (or for good: a 303 sends
    /// none). Returns the hop's number, for its body's calls.
    func nextHop() -> Int {
        state.withLockedValue { state in
            state.hop += 1
            state.phase = .resting
            return state.hop
        }
    }

    /// The connection asked `hop`'s body for a part (so it took the one before), or a part was
    /// read from its file: the watch counts from now.
    func asked(hop: Int) {
        let now = elapsed()
        state.withLockedValue { state in
            if state.hop == hop { state.phase = .sending(since: now) }
        }
    }

    /// `hop`'s body was sent: the watch rests (AsyncHTTPClient's `read` timeout covers the rest).
    func sent(hop: Int) {
        state.withLockedValue { state in
            if state.hop == hop { state.phase = .resting }
        }
    }

    /// The head or bytes of the answer arrived: a body still going out counts from now.
    func answered() {
        let now = elapsed()
        state.withLockedValue { state in
            if case .sending = state.phase { state.phase = .sending(since: now) }
        }
    }

    /// When the watcher looks again (on ``elapsed``'s scale), or `nil` when the exchange stalled.
    private func nextLook() -> Duration? {
        let now = elapsed()
        return state.withLockedValue { state in
            switch state.phase {
            // Looked at again after a while (never in a tight loop, whatever `idle` is).
            case .resting: now + max(idle, .milliseconds(100))
            case .sending(let since): since + idle > now ? since + idle : nil
            }
        }
    }

    /// Runs `operation`, cancelling it when the body stalls; it then ends with
    /// `URLError(.timedOut)`, unless it finished all the same (its result stands: a file it
    /// wrote is the caller's). The operation's own outcome always decides: a caller's cancel
    /// stays a cancel.
    func guarding<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: GuardOutcome<T>.self) { group in
            group.addTask { .finished(try await operation()) }
            group.addTask {
                while let deadline = self.nextLook() {
                    do { try await self.sleep(deadline) } catch { return .ended }
                }
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
                    case .ended:
                        continue
                    }
                }
            } catch {
                group.cancelAll()
                // Only the operation throws; after a stall, its error is the cancel's.
                throw stalled && !Task.isCancelled ? URLError(.timedOut) : error
            }
            // The operation's task either returns or throws.
            throw CancellationError()
        }
    }
}

/// What finished first in ``SendWatch/guarding(_:)``: the operation, or the watcher.
private enum GuardOutcome<T: Sendable>: Sendable {
    case finished(T)
    case stalled
    /// The watcher was cancelled (its operation finished, or the caller cancelled).
    case ended
}
