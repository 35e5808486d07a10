import Foundation
import NIOConcurrencyHelpers

/// The idle timeout while a request body is sent.
///
/// AsyncHTTPClient starts its `read` timeout only once the whole request has been written, and its
/// `write` timeout only while the connection could take more and the body has nothing to give; a
/// server that reads the head, then stops reading the body and never answers, left an upload
/// waiting for ever. A watch ends such an exchange with `URLError(.timedOut)` when, for
/// ``AsyncHTTPClientTransport/sendIdleTimeout``, no part of the body was taken by the connection
/// and no byte of the answer arrived. It starts when the connection first asks for the body (an upload waiting for a
/// connection from the pool is not stalled), stops once the body's last part was taken
/// (AsyncHTTPClient's `read` timeout covers the rest), and starts again with each hop's body (a
/// 307 sends it again).
final class SendWatch: Sendable {
    private enum State {
        /// The connection has not asked for the body yet (it may be waiting for a connection,
        /// which is not a stall).
        case waiting
        /// The body is going out; when anything last moved (on ``elapsed``'s scale).
        case sending(since: Duration)
        /// The last part was taken.
        case sent
    }

    private let state = NIOLockedValueBox(State.waiting)
    let idle: Duration
    /// The time since the watch was made, on its clock.
    private let elapsed: @Sendable () -> Duration
    private let sleep: @Sendable (Duration) async throws -> Void

    /// A watch that ends an exchange when nothing moved for `idle` on `clock` (tests pass one
    /// they advance).
    init<C: Clock>(idle: Duration, clock: C = ContinuousClock()) where C.Duration == Duration {
        self.idle = idle
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleep = { try await clock.sleep(for: $0) }
    }

    /// A hop's body is about to be sent (a redirect's too): nothing is watched until the
    /// connection asks for it.
    func restart() {
        state.withLockedValue { $0 = .waiting }
    }

    /// The connection asked for a part of the body (so it took the one before), or bytes of the
    /// answer arrived.
    func moved() {
        let now = elapsed()
        state.withLockedValue { state in
            switch state {
            case .waiting, .sending: state = .sending(since: now)
            case .sent: break
            }
        }
    }

    /// The body's last part was taken.
    func finished() {
        state.withLockedValue { $0 = .sent }
    }

    /// How long until the exchange counts as stalled (`idle` while the body has not started),
    /// or `nil` once it is sent.
    private func remaining() -> Duration? {
        let now = elapsed()
        return state.withLockedValue { state in
            switch state {
            case .waiting: idle
            case .sending(let since): since + idle - now
            case .sent: nil
            }
        }
    }

    /// Runs `operation`, and ends it (cancelled) with `URLError(.timedOut)` when the body stalls.
    func guarding<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                while let wait = self.remaining() {
                    if wait <= .zero { throw URLError(.timedOut) }
                    try await self.sleep(wait)
                }
                return nil
            }
            do {
                while let result = try await group.next() {
                    if let result {
                        group.cancelAll()
                        return result
                    }
                }
            } catch {
                group.cancelAll()
                throw error
            }
            // The operation's task either returns a value or throws.
            throw CancellationError()
        }
    }
}
