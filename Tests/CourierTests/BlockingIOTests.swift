import Foundation
import Testing

@testable import Courier

/// `BlockingIO.complete`: work whose outcome the caller must know is waited for whatever happens
/// to the caller, and a cancel reaches it as `isCancelled()`.
@Suite struct BlockingIOTests {
    struct Failed: Error {}

    @Test func aCancelReachesTheWorkAndTheCallerWaitsForItsEnd() async throws {
        let started = Locked(false)
        let ended = Locked(false)
        let call = Task {
            try await BlockingIO.complete { isCancelled -> Bool in
                started.withLock { $0 = true }
                defer { ended.withLock { $0 = true } }
                // Bounded: a work that never sees the cancel ends on its own and says so.
                for _ in 0..<50_000_000 where isCancelled() { return true }
                return false
            }
        }
        #expect(await eventually { started.withLock { $0 } })
        call.cancel()
        #expect(try await call.value, "the work never saw the cancel")
        #expect(ended.withLock { $0 })
    }

    @Test func aCancelBeforeTheCallIsSeenAtOnce() async throws {
        let sawCancel = try await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await BlockingIO.complete { isCancelled in isCancelled() }
        }.value
        #expect(sawCancel)
    }

    @Test func theWorksResultAndErrorArePassedOn() async throws {
        #expect(try await BlockingIO.complete { _ in 42 } == 42)
        await #expect(throws: Failed.self) { try await BlockingIO.complete { _ -> Int in throw Failed() } }
    }
}
