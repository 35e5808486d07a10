import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import CourierAsyncHTTPClient

/// ``Pacing``: a body sent in parts leaves a mark on the client's event loops every 4 MiB and waits
/// for the one before, and waits for a last mark before the part that ends it, never between its
/// last byte and its end.
@Suite(.timeLimit(.minutes(1))) struct PacingTests {
    /// What a body did, in order: a part of so many bytes handed over, a mark left (numbered from
    /// 1), a wait for a mark, the end.
    enum Event: Equatable, CustomStringConvertible {
        case part(Int), mark(Int), wait(Int), end
        var description: String {
            switch self {
            case .part(let bytes): "part(\(bytes))"
            case .mark(let number): "mark(\(number))"
            case .wait(let number): "wait(\(number))"
            case .end: "end"
            }
        }
    }

    /// The events of a body's whole iteration, its marks and waits recorded instead of made.
    static func events<Body: AsyncSequence>(_ makeBody: (Pacing) -> Body) async throws -> [Event]
    where Body.Element == ByteBuffer {
        let log = NIOLockedValueBox<[Event]>([])
        let marks = NIOLockedValueBox(0)
        let pacing = Pacing(mark: {
            let number = marks.withLockedValue { count in
                count += 1
                return count
            }
            log.withLockedValue { $0.append(.mark(number)) }
            return { log.withLockedValue { $0.append(.wait(number)) } }
        })
        var parts = makeBody(pacing).makeAsyncIterator()
        while let part = try await parts.next() { log.withLockedValue { $0.append(.part(part.readableBytes)) } }
        log.withLockedValue { $0.append(.end) }
        return log.withLockedValue { $0 }
    }

    static func parts(_ count: Int, of bytes: Int) -> [Event] { Array(repeating: .part(bytes), count: count) }

    static let kib64 = 64 << 10

    /// A stride's parts: 64 in memory, 4 from a file.
    static let stride = Pacing.stride / kib64

    /// A mark every stride (4 MiB), then the wait for the one before it; before the part that
    /// ends the body (when others went before it) a mark waited for at once; the last byte and
    /// the end follow that part with no wait.
    @Test(arguments: [
        // Three strides of parts, then the last 100 bytes as 99 and 1.
        (
            3 * Pacing.stride + 100,
            parts(stride, of: kib64) + [.mark(1)] + parts(stride, of: kib64) + [.mark(2), .wait(1)]
                + parts(stride, of: kib64) + [.mark(3), .wait(3), .part(99), .part(1), .end]
        ),
        (100_000, [.part(kib64), .mark(1), .wait(1), .part(100_000 - kib64 - 1), .part(1), .end]),
        // The part that ends the body is its last byte.
        (kib64 + 1, [.part(kib64), .mark(1), .wait(1), .part(1), .end]),
        // One part: nothing went before it.
        (1000, [.part(999), .part(1), .end]),
    ])
    func aBodyInMemoryMarksEveryStrideAndWaitsBeforeItsEnd(size: Int, expected: [Event]) async throws {
        let events = try await Self.events {
            DataChunks(data: Data(count: size), progress: nil, watch: nil, pacing: $0)
        }
        #expect(events == expected)
    }

    @Test func aFileMarksEveryStrideOfParts() async throws {
        let size = 3 * Pacing.stride + 100
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pacing-\(UUID().uuidString)")
        try Data(count: size).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let events = try await Self.events {
            FileChunks(url: file, size: UInt64(size), progress: nil, watch: nil, pacing: $0)
        }
        let mib = 1 << 20
        let stride = Pacing.stride / mib
        #expect(
            events == Self.parts(stride, of: mib) + [.mark(1)] + Self.parts(stride, of: mib) + [.mark(2), .wait(1)]
                + Self.parts(stride, of: mib) + [.mark(3), .wait(3), .part(99), .part(1), .end])
    }

    /// A mark on real loops is reached only once a busy loop has run what was queued on it
    /// before. The second of two loops is held by a task waiting on a semaphore (on the loop's
    /// own thread; 10 s at most, so a failure cannot hang the run), a task queued behind it. The
    /// order holds whenever the mark waits for that loop; a mark that did not would usually, not
    /// always, be seen (the loop is released at once: no sleep here).
    @Test func aMarkIsReachedAfterWhatEveryLoopHadQueued() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let order = NIOLockedValueBox<[String]>([])
        let gate = DispatchSemaphore(value: 0)
        let held = Array(group.makeIterator())[1]
        held.execute { _ = gate.wait(timeout: .now() + 10) }
        held.execute { order.withLockedValue { $0.append("queued") } }
        let reached = Pacing.mark(Array(group.makeIterator()))
        let waiting = Task {
            try await reached()
            order.withLockedValue { $0.append("reached") }
        }
        gate.signal()
        let outcome = await waiting.result
        try await group.shutdownGracefully()
        try outcome.get()
        #expect(order.withLockedValue { $0 } == ["queued", "reached"])
    }

    /// A loop that has shut down drops the task it is given: the body fails instead of waiting
    /// for ever. (SwiftNIO prints an error for it, and stops the process in its strict mode.)
    @Test(.enabled(if: ProcessInfo.processInfo.environment["SWIFTNIO_STRICT"] == nil, "SwiftNIO's strict mode"))
    func aGroupThatHasShutDownFailsTheWait() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        try await group.shutdownGracefully()
        await #expect(throws: EventLoopGone.self) { try await Pacing.mark(Array(group.makeIterator()))() }
    }
}
