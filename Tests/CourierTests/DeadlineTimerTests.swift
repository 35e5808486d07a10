import CourierTesting
import Foundation
import Testing

@testable import Courier

/// The provider's one timer for every deadline: few sleepers however many deadlines come and go.
@Suite struct DeadlineTimerTests {
    /// A long deadline (a stream's total timeout) stays while short ones come and go: the sleeper
    /// for the long one is the only one left after each short one, never one more per short one
    /// (found by review: each short deadline left another sleeper for the long one).
    @Test func shortDeadlinesComingAndGoingLeaveOneSleeperForALongOne() async throws {
        let clock = TestClock()
        let timer = DeadlineTimer(clock: clock)
        let fired = Locked(0)
        let long = timer.schedule(after: .seconds(3_600)) { Issue.record("the long deadline fired") }
        #expect(timer.sleepingCount == 1)
        for round in 1...10 {
            _ = timer.schedule(after: .seconds(5)) { fired.withLock { $0 += 1 } }
            let cancelled = timer.schedule(after: .seconds(6)) { Issue.record("a cancelled deadline fired") }
            timer.cancel(cancelled)
            #expect(timer.sleepingCount == 2)
            await clock.waitForSleepers(2)
            clock.advance(by: .seconds(5))
            #expect(await eventually { fired.withLock { $0 } == round })
            // Decided before the deadline's action ran: the long deadline's sleeper still covers it.
            #expect(timer.sleepingCount == 1, "round \(round)")
        }
        #expect(timer.pendingCount == 1)
        timer.cancel(long)
        #expect(timer.pendingCount == 0)
    }

    /// A deadline earlier than every sleeper's wake gets a sleeper of its own, and fires on time.
    @Test func anEarlierDeadlineGetsItsOwnSleeper() async throws {
        let clock = TestClock()
        let timer = DeadlineTimer(clock: clock)
        let fired = Locked<[Int]>([])
        _ = timer.schedule(after: .seconds(10)) { fired.withLock { $0.append(10) } }
        _ = timer.schedule(after: .seconds(20)) { fired.withLock { $0.append(20) } }
        #expect(timer.sleepingCount == 1)
        _ = timer.schedule(after: .seconds(1)) { fired.withLock { $0.append(1) } }
        #expect(timer.sleepingCount == 2)
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(1))
        #expect(await eventually { fired.withLock { $0 } == [1] })
        clock.advance(by: .seconds(9))
        #expect(await eventually { fired.withLock { $0 } == [1, 10] })
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(10))
        #expect(await eventually { fired.withLock { $0 } == [1, 10, 20] })
        #expect(timer.pendingCount == 0)
    }
}
