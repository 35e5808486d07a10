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
/// Every ``stride`` bytes handed over, and before the part that ends the body, the body waits
/// until each of the client's event loops has run what was queued on it before: the
/// connection's loop has then taken the parts handed so far, and paused the body if the
/// connection is full. A body is never more than ``stride`` and one part ahead of its
/// connection's loop. The part that ends a body is the one its last byte is held back from
/// (``LastByteApart``): that part takes any wait, and the last byte and the end follow it at
/// once. A group with no loops to list paces nothing.
struct Pacing: Sendable {
    /// How far a body may run ahead of its connection's loop, in bytes.
    static let stride = 1 << 20

    /// Waits until the loops have caught up.
    private let wait: @Sendable () async throws -> Void

    /// Pacing by the loops a connection of the client may be on.
    init(_ group: any EventLoopGroup) {
        let loops = Array(group.makeIterator())
        wait = { try await CatchUp.run(on: loops) }
    }

    /// Pacing by `wait` (tests record when a body waits).
    init(wait: @escaping @Sendable () async throws -> Void) {
        self.wait = wait
    }

    /// Waits until every loop has run the tasks queued on it before this call.
    func catchUp() async throws {
        try await wait()
    }

    /// A body's count of the bytes it handed over since its loops last caught up.
    struct Gauge: Sendable {
        let pacing: Pacing?
        private var ahead = 0

        init(_ pacing: Pacing?) {
            self.pacing = pacing
        }

        /// Called before a part of `count` bytes is handed over: waits for the loops when the
        /// parts handed since they last caught up reach ``Pacing/stride``, or when the part
        /// ends the body and others went before it (the rest of the body has then been taken by
        /// the connection's loop). Returns whether it waited.
        mutating func beforeHanding(_ count: Int, endsBody: Bool) async throws -> Bool {
            guard let pacing else { return false }
            let waits = ahead >= Pacing.stride || (endsBody && ahead > 0)
            if waits {
                try await pacing.catchUp()
                ahead = 0
            }
            ahead += count
            return waits
        }
    }
}

/// The loop has shut down: it dropped the task a body sent it to wait for, and the body fails.
struct EventLoopGone: Error {}

/// One wait for a set of loops: a task on each, and the waiter resumed once all have run, or with
/// ``EventLoopGone`` as soon as a loop drops its task (a loop that has shut down drops what it is
/// given, which would otherwise leave the body waiting for ever).
private final class CatchUp: Sendable {
    private let state: NIOLockedValueBox<(left: Int, waiter: CheckedContinuation<Void, any Error>?)>

    private init(loops: Int, waiter: CheckedContinuation<Void, any Error>) {
        state = NIOLockedValueBox((loops, waiter))
    }

    static func run(on loops: [any EventLoop]) async throws {
        guard !loops.isEmpty else { return }
        // Sent to all loops at once, so the wait is the slowest loop's, not their sum.
        try await withCheckedThrowingContinuation { waiter in
            let catchUp = CatchUp(loops: loops.count, waiter: waiter)
            for loop in loops {
                let errand = Errand(catchUp)
                loop.execute { errand.run() }
            }
        }
    }

    fileprivate func ran() {
        let waiter: CheckedContinuation<Void, any Error>? = state.withLockedValue { state in
            state.left -= 1
            guard state.left == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    fileprivate func dropped() {
        let waiter = state.withLockedValue { state in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: EventLoopGone())
    }

    /// The task sent to one loop; freed without having run, it tells the wait.
    private final class Errand: Sendable {
        private let catchUp: CatchUp
        private let hasRun = NIOLockedValueBox(false)

        init(_ catchUp: CatchUp) {
            self.catchUp = catchUp
        }

        func run() {
            hasRun.withLockedValue { $0 = true }
            catchUp.ran()
        }

        deinit {
            if !hasRun.withLockedValue({ $0 }) { catchUp.dropped() }
        }
    }
}
