import NIOConcurrencyHelpers
import NIOCore

/// Keeps a body sent in parts from running ahead of its connection.
///
/// AsyncHTTPClient 1.37 hands each part of a streamed body to the connection's event loop
/// without waiting for it, and asks for the next part at once, until that loop has written
/// enough to find the connection full and pauses the body. When the loop lags behind (a busy
/// machine, a loop with other work), a body can be asked for all its parts before the
/// connection took more than a few: an upload from a file would then be read into memory
/// whole, and ``SendWatch`` would take the asking for movement and rest while a server that
/// stopped reading holds the upload (seen on a loaded machine: the stalled-upload tests failed
/// about one run in six).
///
/// Every ``stride`` bytes handed over, the body leaves a mark on each of the client's event loops
/// (a task queued behind the parts handed so far) and waits for the mark it left a stride before:
/// the connection's loop has then taken the parts handed before that mark, and paused the body if
/// the connection is full. The body keeps a stride of parts queued, so the loop never waits for it,
/// and never has more than two strides of parts handed and not yet taken by its connection's loop
/// (a file also reads its next part from disk during the wait). Before the part
/// that ends the body, it waits for a mark behind everything handed so far: that part takes the
/// wait, and the last byte, held back from it (``LastByteApart``), and the end follow it at once.
/// A group with no loops to list paces nothing. A wait cannot be cancelled: AsyncHTTPClient never
/// cancels the task a body runs in, and the loops run what they are given (a loop that never
/// returns would hold the body, as it holds its connections).
struct Pacing: Sendable {
    /// How far a body runs ahead of the mark it waits for, in bytes. A 256 MiB body in memory
    /// took 10 % longer on loopback than without pacing with marks every MiB, and 20 % longer
    /// waiting for everything handed every MiB (medians of 20 interleaved runs; a mark is
    /// reached only once every loop of the group has been scheduled); with marks every 4 MiB, no
    /// difference was measurable (Benchmarks/RESULTS.md).
    static let stride = 4 << 20

    /// Leaves a mark behind what was queued so far; returns the wait for it.
    private let mark: @Sendable () -> @Sendable () async throws -> Void

    /// Pacing by the loops a connection of the client may be on.
    init(_ group: any EventLoopGroup) {
        let loops = Array(group.makeIterator())
        mark = { Self.mark(loops) }
    }

    /// Leaves a mark on each of `loops`, behind what was queued on it so far; returns the wait
    /// for all of them.
    static func mark(_ loops: [any EventLoop]) -> @Sendable () async throws -> Void {
        let mark = LoopMark(on: loops)
        return { try await mark.reached() }
    }

    /// Pacing by `mark` (tests record when a body marks and waits).
    init(mark: @escaping @Sendable () -> @Sendable () async throws -> Void) {
        self.mark = mark
    }

    /// A body's count of the bytes it handed over since its last mark, and the mark it waits for
    /// next.
    struct Gauge: Sendable {
        let pacing: Pacing?
        private var ahead = 0
        private var previous: (@Sendable () async throws -> Void)?

        init(_ pacing: Pacing?) {
            self.pacing = pacing
        }

        /// Called before a part of `count` bytes is handed over: every ``Pacing/stride``, leaves
        /// a mark and waits for the one before; before the part that ends the body (when others
        /// went before it), waits for a mark behind all of them. Returns whether it waited.
        mutating func beforeHanding(_ count: Int, endsBody: Bool) async throws -> Bool {
            guard let pacing else { return false }
            var waited = false
            if endsBody {
                if ahead > 0 || previous != nil {
                    try await pacing.mark()()
                    waited = true
                }
            } else if ahead >= Pacing.stride {
                let mark = pacing.mark()
                if let previous {
                    try await previous()
                    waited = true
                }
                previous = mark
                ahead = 0
            }
            ahead += count
            return waited
        }
    }
}

/// The loop has shut down: it dropped the task a body sent it to wait for, and the body fails.
/// A last resort against a group shut down while its client still sends: SwiftNIO 2.101 prints
/// an error and drops the task (and stops the process when `SWIFTNIO_STRICT` is set, as it says
/// later versions will).
struct EventLoopGone: Error {}

/// A task queued on each of a set of loops, reached once all have run, or failed with
/// ``EventLoopGone`` as soon as a loop drops its task (a loop that has shut down drops what it is
/// given, which would otherwise leave the body waiting for ever).
private final class LoopMark: Sendable {
    private struct State {
        var left: Int
        var outcome: Result<Void, any Error>?
        var waiter: CheckedContinuation<Void, any Error>?
    }

    private let state: NIOLockedValueBox<State>

    /// Queued on all loops at once, so reaching it takes the slowest loop's time, not their sum.
    init(on loops: [any EventLoop]) {
        state = NIOLockedValueBox(State(left: loops.count, outcome: loops.isEmpty ? .success(()) : nil))
        for loop in loops {
            let errand = Errand(self)
            loop.execute { errand.run() }
        }
    }

    /// Returns once every loop ran its task; throws ``EventLoopGone`` if one dropped it. Awaited
    /// once: a body waits for each of its marks at most once.
    func reached() async throws {
        if let outcome = state.withLockedValue({ $0.outcome }) { return try outcome.get() }
        try await withCheckedThrowingContinuation { waiter in
            let outcome = state.withLockedValue { state in
                assert(state.waiter == nil, "a mark is waited for once")
                if state.outcome == nil { state.waiter = waiter }
                return state.outcome
            }
            if let outcome { waiter.resume(with: outcome) }
        }
    }

    fileprivate func ran() {
        settle { state in
            state.left -= 1
            return state.left == 0 ? .success(()) : nil
        }
    }

    fileprivate func dropped() {
        settle { _ in .failure(EventLoopGone()) }
    }

    /// Records the outcome `decide` gives, once, and resumes the waiter with it.
    private func settle(_ decide: (inout State) -> Result<Void, any Error>?) {
        typealias Waiter = CheckedContinuation<Void, any Error>
        let settled = state.withLockedValue { state -> (waiter: Waiter?, outcome: Result<Void, any Error>)? in
            guard state.outcome == nil, let outcome = decide(&state) else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return (state.waiter, outcome)
        }
        if let settled { settled.waiter?.resume(with: settled.outcome) }
    }

    /// The task sent to one loop; freed without having run, it fails the mark.
    private final class Errand: Sendable {
        private let mark: LoopMark
        private let hasRun = NIOLockedValueBox(false)

        init(_ mark: LoopMark) {
            self.mark = mark
        }

        func run() {
            hasRun.withLockedValue { $0 = true }
            mark.ran()
        }

        deinit {
            if !hasRun.withLockedValue({ $0 }) { mark.dropped() }
        }
    }
}
