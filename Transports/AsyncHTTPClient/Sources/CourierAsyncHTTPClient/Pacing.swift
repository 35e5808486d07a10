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
/// Every ``stride`` bytes handed over, and before a body's last part, the body waits until each
/// of the client's event loops has run what was queued on it before: the connection's loop has
/// then taken the parts handed so far, and paused the body if the connection is full. A body is
/// never more than ``stride`` and one part ahead of its connection's loop.
struct Pacing: Sendable {
    /// How far a body may run ahead of its connection's loop, in bytes.
    static let stride = 1 << 20

    /// The loops a connection of the client may be on.
    private let loops: [any EventLoop]

    init(_ group: any EventLoopGroup) {
        loops = Array(group.makeIterator())
    }

    /// Waits until every loop has run the tasks queued on it before this call.
    func catchUp() async throws {
        // Queued on all loops at once, so the wait is the slowest loop's, not their sum.
        let queued = loops.map { $0.submit {} }
        for task in queued { try await task.get() }
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
        /// ends the body (the rest of the body has then been taken by the connection's loop).
        mutating func beforeHanding(_ count: Int, endsBody: Bool) async throws {
            guard let pacing else { return }
            if endsBody || ahead >= Pacing.stride {
                try await pacing.catchUp()
                ahead = 0
            }
            ahead += count
        }
    }
}
