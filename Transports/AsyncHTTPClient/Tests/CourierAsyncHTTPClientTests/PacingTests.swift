import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import CourierAsyncHTTPClient

/// ``Pacing``: a body sent in parts waits for the client's event loops every MiB and before its
/// last byte, so it cannot be handed over whole while a loop lags behind.
///
/// Each test holds a loop busy (a task waiting on a semaphore, on the loop's own thread) with a
/// task queued behind it, and lets it go once the body is waiting or has gone past: a body that
/// waited comes after the queued task.
@Suite(.timeLimit(.minutes(1))) struct PacingTests {
    /// A loop held busy until `release`, with a task behind that records "queued".
    final class HeldLoop: Sendable {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let order = NIOLockedValueBox<[String]>([])
        private let gate = DispatchSemaphore(value: 0)

        /// Holds the second of the group's two loops busy: catching up waits for every loop.
        init() {
            let loop = Array(group.makeIterator())[1]
            loop.execute { [gate] in gate.wait() }
            loop.execute { [order] in order.withLockedValue { $0.append("queued") } }
        }

        func record(_ event: String) { order.withLockedValue { $0.append(event) } }
        func release() { gate.signal() }
        func shutdown() async throws { try await group.shutdownGracefully() }
    }

    @Test func catchingUpWaitsForWhatEveryLoopHadQueued() async throws {
        let held = HeldLoop()
        let pacing = Pacing(held.group)
        let caughtUp = Task {
            try await pacing.catchUp()
            held.record("caught up")
        }
        held.release()
        try await caughtUp.value
        #expect(held.order.withLockedValue { $0 } == ["queued", "caught up"])
        try await held.shutdown()
    }

    /// Parts up to a MiB (or all but the last byte) are handed over while the loop is busy;
    /// the next waits for it.
    @Test(arguments: [(size: 2 << 20, handedFreely: 16), (size: 100_000, handedFreely: 2)])
    func aBodyWaitsForTheLoopsEveryMiBAndBeforeItsLastByte(size: Int, handedFreely: Int) async throws {
        let held = HeldLoop()
        var parts = DataChunks(data: Data(count: size), progress: nil, watch: nil, pacing: Pacing(held.group))
            .makeAsyncIterator()
        var handed = 0
        for _ in 0..<handedFreely { handed += try await parts.next()?.readableBytes ?? 0 }
        #expect(handed == min(Pacing.stride, size - 1))
        let next = Task { [parts] in
            var parts = parts
            let part = try await parts.next()
            held.record("next part")
            return part?.readableBytes
        }
        held.release()
        #expect(try await next.value != nil)
        #expect(held.order.withLockedValue { $0 } == ["queued", "next part"])
        try await held.shutdown()
    }
}
