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
        // The work reads the flag only once the test has cancelled: no race with a bounded spin.
        let go = DispatchSemaphore(value: 0)
        let call = Task {
            try await BlockingIO.complete { isCancelled -> Bool in
                started.withLock { $0 = true }
                defer { ended.withLock { $0 = true } }
                go.wait()
                return isCancelled()
            }
        }
        #expect(await eventually { started.withLock { $0 } })
        // The work runs inside the call's cancellation handler: the cancel sets the flag before
        // `cancel()` returns.
        call.cancel()
        go.signal()
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
