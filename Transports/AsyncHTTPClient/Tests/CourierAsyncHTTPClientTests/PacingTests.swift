import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import CourierAsyncHTTPClient

/// ``Pacing``: a body sent in parts waits for the client's event loops every MiB and before the
/// part that ends it, never between its last byte and its end.
@Suite(.timeLimit(.minutes(1))) struct PacingTests {
    /// What a body did, in order: a part of so many bytes handed over, a wait for the loops, the end.
    enum Event: Equatable, CustomStringConvertible {
        case part(Int), wait, end
        var description: String {
            switch self {
            case .part(let bytes): "part(\(bytes))"
            case .wait: "wait"
            case .end: "end"
            }
        }
    }

    /// The events of a body's whole iteration, its waits recorded instead of made.
    static func events<Body: AsyncSequence>(_ makeBody: (Pacing) -> Body) async throws -> [Event]
    where Body.Element == ByteBuffer {
        let log = NIOLockedValueBox<[Event]>([])
        var parts = makeBody(Pacing(wait: { log.withLockedValue { $0.append(.wait) } })).makeAsyncIterator()
        while let part = try await parts.next() { log.withLockedValue { $0.append(.part(part.readableBytes)) } }
        log.withLockedValue { $0.append(.end) }
        return log.withLockedValue { $0 }
    }

    static func parts(_ count: Int, of bytes: Int) -> [Event] { Array(repeating: .part(bytes), count: count) }

    static let kib64 = 64 << 10

    /// Every MiB, and before the part that ends the body when others went before it; the last
    /// byte and the end follow that part with no wait.
    @Test(arguments: [
        // 32 parts, then the last 100 bytes as 99 and 1.
        (2 << 20 + 100, parts(16, of: kib64) + [.wait] + parts(16, of: kib64) + [.wait, .part(99), .part(1), .end]),
        (100_000, [.part(kib64), .wait, .part(100_000 - kib64 - 1), .part(1), .end]),
        // The part that ends the body is its last byte.
        (kib64 + 1, [.part(kib64), .wait, .part(1), .end]),
        // One part: nothing went before it.
        (1000, [.part(999), .part(1), .end]),
    ])
    func aBodyInMemoryWaitsEveryMiBAndBeforeItsEnd(size: Int, expected: [Event]) async throws {
        let events = try await Self.events {
            DataChunks(data: Data(count: size), progress: nil, watch: nil, pacing: $0)
        }
        #expect(events == expected)
    }

    @Test func aFileWaitsBeforeEachPartAfterTheFirst() async throws {
        let size = 2 << 20 + 100
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pacing-\(UUID().uuidString)")
        try Data(count: size).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let events = try await Self.events {
            FileChunks(url: file, size: UInt64(size), progress: nil, watch: nil, pacing: $0)
        }
        #expect(events == [.part(1 << 20), .wait, .part(1 << 20), .wait, .part(99), .part(1), .end])
    }

    /// The wait on real loops: it ends only once a busy loop has run what was queued on it
    /// before. The second of two loops is held by a task waiting on a semaphore (on the loop's
    /// own thread; 10 s at most, so a failure cannot hang the run), a task queued behind it.
    @Test func catchingUpWaitsForWhatEveryLoopHadQueued() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let order = NIOLockedValueBox<[String]>([])
        let gate = DispatchSemaphore(value: 0)
        let held = Array(group.makeIterator())[1]
        held.execute { _ = gate.wait(timeout: .now() + 10) }
        held.execute { order.withLockedValue { $0.append("queued") } }
        let pacing = Pacing(group)
        let caughtUp = Task {
            try await pacing.catchUp()
            order.withLockedValue { $0.append("caught up") }
        }
        gate.signal()
        let outcome = await caughtUp.result
        try await group.shutdownGracefully()
        try outcome.get()
        #expect(order.withLockedValue { $0 } == ["queued", "caught up"])
    }

    /// A loop that has shut down drops the task it is given: the body fails instead of waiting
    /// for ever.
    @Test func aGroupThatHasShutDownFailsTheWait() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        try await group.shutdownGracefully()
        await #expect(throws: EventLoopGone.self) { try await Pacing(group).catchUp() }
    }
}
