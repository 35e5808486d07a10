import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct BodyBufferTests {
    @Test func aSlowReaderSpillsToDiskInOrderWithinTheMemoryWindow() async throws {
        let buffer = BodyBuffer(limits: .default)
        let chunkSize = 64 << 10
        let count = 160  // 10 MiB: more than twice the memory window
        for index in 0..<count {
            #expect(buffer.write(Data(repeating: UInt8(index % 251), count: chunkSize)))
            #expect(buffer.bytesInMemory <= BodyBuffer.memoryWindow)
        }
        buffer.finish()
        var received = Data()
        while let chunk = try await buffer.next() { received.append(chunk) }
        var expected = Data()
        for index in 0..<count { expected.append(Data(repeating: UInt8(index % 251), count: chunkSize)) }
        #expect(received == expected)
        buffer.terminate()
    }

    @Test func theBacklogIsBounded() async throws {
        let buffer = BodyBuffer(limits: Limits(maxStreamBacklogBytes: 100))
        #expect(buffer.write(Data(count: 60)))
        #expect(!buffer.write(Data(count: 60)))
        await #expect {
            while try await buffer.next() != nil {}
        } throws: { error in
            if case CourierError.limitExceeded(.streamBacklog(limit: 100)) = error { return true }
            return false
        }
    }

    /// A cancel that lands while the reader is on its way into its wait (after `next()` looked at
    /// the flag, before the waiter is stored, so the cancellation handler finds no one to wake)
    /// still ends the read at once, with nothing written: the flag is read again under the
    /// buffer's lock. The buffer's test hook cancels the reading task in that very moment. A
    /// reader still waiting after a bounded number of yields is let go by ending the body.
    @Test func aCancelOnTheWayIntoTheWaitEndsTheRead() async {
        let buffer = BodyBuffer(limits: .default, willWait: { withUnsafeCurrentTask { $0?.cancel() } })
        let ended = Locked(false)
        let reader = Task { () -> CourierError? in
            defer { ended.withLock { $0 = true } }
            do throws(CourierError) {
                _ = try await buffer.next()
                return nil
            } catch {
                return error
            }
        }
        let endedAlone = await eventually({ ended.withLock { $0 } }, tries: 100_000)
        if !endedAlone { buffer.finish() }
        #expect(endedAlone, "the reader waited on after its task was cancelled")
        let error = await reader.value
        #expect(
            {
                if case .cancelled? = error { return true }
                return false
            }(), "ended with \(String(describing: error))")
        buffer.terminate()
    }

    /// A timer that fires only when told, and fires a deadline even once it was cancelled: a
    /// deadline that came due just as its cancel was on the way.
    final class LateTimer: DeadlineScheduling {
        private let fires = Locked<[@Sendable () -> Void]>([])

        func schedule(after duration: Duration, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
            fires.withLock { fires in
                fires.append(fire)
                return UInt64(fires.count - 1)
            }
        }

        func cancel(_ id: UInt64) {}

        var scheduled: Int { fires.withLock { $0.count } }

        func fire(_ id: Int) {
            let fire = fires.withLock { $0[id] }
            fire()
        }
    }

    /// An idle deadline that fires after a chunk woke the reader (before the reader could cancel
    /// it) ends nothing: the chunk is read, and so is everything after it.
    @Test func anIdleDeadlineFiringAfterAChunkCameDropsNothing() async throws {
        let buffer = BodyBuffer(limits: .default)
        let timer = LateTimer()
        buffer.setIdleTimeout(.seconds(5), timer: timer)
        let reader = Task { try await buffer.next() }
        #expect(await eventually { timer.scheduled == 1 })
        buffer.write(Data("in time".utf8))
        timer.fire(0)
        #expect(try await reader.value == Data("in time".utf8))
        #expect(buffer.write(Data("more".utf8)))
        buffer.finish()
        #expect(try await buffer.next() == Data("more".utf8))
        #expect(try await buffer.next() == nil)
    }

    /// The deadline of a wait that is still going on ends the stream with `timedOut`, and the
    /// call's end (plugins' `didFinish`, a traffic slot) has run by the time `next()` throws.
    @Test func theIdleDeadlineOfTheWaitGoingOnEndsTheStream() async throws {
        let buffer = BodyBuffer(limits: .default)
        let timer = LateTimer()
        buffer.setIdleTimeout(.seconds(5), timer: timer)
        let ended = Locked<CourierError??>(nil)
        await buffer.onEnd { outcome in ended.withLock { $0 = .some(outcome) } }
        #expect(buffer.write(Data("first".utf8)))
        #expect(try await buffer.next() == Data("first".utf8))
        let reader = Task { try await buffer.next() }
        #expect(await eventually { timer.scheduled == 1 })
        timer.fire(0)
        await #expect {
            try await reader.value
        } throws: { error in
            if case CourierError.timedOut(.seconds(5)) = error { return true }
            return false
        }
        guard case .timedOut(.seconds(5))?? = ended.withLock({ $0 }) else {
            Issue.record("the call's end had not run when next() threw: \(String(describing: ended.withLock { $0 }))")
            return
        }
        #expect(!buffer.write(Data("late".utf8)))
    }

    /// A total deadline that passes after the writer finished, with chunks (in memory or on
    /// disk) still unread, ends the read with `timedOut`, for the reader and the call's end: never
    /// with a clean end short of its bytes (found by review).
    @Test(arguments: [16, 160])
    func aTotalDeadlinePassingBeforeTheReaderCaughtUpIsAnError(chunks: Int) async throws {
        let buffer = BodyBuffer(limits: .default)
        let timer = LateTimer()
        buffer.setTotalTimeout(.seconds(5), timer: timer)
        let ended = Locked<CourierError??>(nil)
        await buffer.onEnd { outcome in ended.withLock { $0 = .some(outcome) } }
        for _ in 0..<chunks { #expect(buffer.write(Data(count: 64 << 10))) }
        buffer.finish()
        #expect(try await buffer.next()?.count == 64 << 10)
        timer.fire(0)
        await #expect {
            while try await buffer.next() != nil {}
        } throws: { error in
            if case CourierError.timedOut(.seconds(5)) = error { return true }
            return false
        }
        // The reader was not waiting when the deadline passed: the call's end runs on its own task.
        #expect(await eventually { ended.withLock { $0 } != nil })
        guard case .timedOut(.seconds(5))?? = ended.withLock({ $0 }) else {
            Issue.record("the call ended with \(String(describing: ended.withLock { $0 }))")
            return
        }
    }

    /// Found by review: a total deadline or the backlog limit that ended the body while the reader
    /// waited ran the call's end (plugins' `didFinish`, the traffic slot) on a task of its own, so
    /// the reader could be answered first. The reader now runs it before it is answered, as for
    /// every other end.
    @Test(arguments: ["deadline", "backlog"])
    func aFailureWhileTheReaderWaitsRunsTheCallsEndFirst(cause: String) async throws {
        let buffer = BodyBuffer(limits: Limits(maxStreamBacklogBytes: 100))
        let timer = LateTimer()
        buffer.setTotalTimeout(.seconds(5), timer: timer)
        let gate = StageGate()
        let ended = Locked<CourierError??>(nil)
        await buffer.onEnd { outcome in
            try? await gate.pass()
            ended.withLock { $0 = .some(outcome) }
        }
        #expect(buffer.claim())
        let reader = Task { () -> (String, String) in
            do throws(CourierError) {
                _ = try await buffer.next()
                return ("no error", "\(String(describing: ended.withLock { $0 }))")
            } catch {
                return ("\(error)", "\(String(describing: ended.withLock { $0 }))")
            }
        }
        #expect(await eventually { buffer.readerIsWaiting })
        if cause == "deadline" {
            timer.fire(0)
        } else {
            #expect(!buffer.write(Data(count: 200)))
        }
        await gate.waitForArrivals(1)
        gate.open()
        let (error, endedWhenAnswered) = await reader.value
        let expected: CourierError =
            cause == "deadline" ? .timedOut(.seconds(5)) : .limitExceeded(.streamBacklog(limit: 100))
        #expect(error == "\(expected)")
        #expect(
            endedWhenAnswered == "\(String(describing: CourierError??.some(expected)))",
            "the reader was answered before the call's end ran")
    }

    /// A reader busy elsewhere when the body fails (its iterator kept) does not hold the call's
    /// end: the traffic slot and `didFinish` do not wait for it to come back (found by review of
    /// the fix above).
    @Test func aFailureWhileTheReaderIsBusyEndsTheCallAtOnce() async throws {
        let buffer = BodyBuffer(limits: .default)
        let timer = LateTimer()
        buffer.setTotalTimeout(.seconds(5), timer: timer)
        let ended = Locked<CourierError??>(nil)
        await buffer.onEnd { outcome in ended.withLock { $0 = .some(outcome) } }
        #expect(buffer.claim())
        #expect(buffer.write(Data("first".utf8)))
        #expect(try await buffer.next() == Data("first".utf8))
        timer.fire(0)
        // The reader has not come back (nor dropped its iterator).
        #expect(await eventually { ended.withLock { $0 } != nil })
        guard case .timedOut(.seconds(5))?? = ended.withLock({ $0 }) else {
            Issue.record("the call ended with \(String(describing: ended.withLock { $0 }))")
            return
        }
    }

    /// A deadline after the reader met the end changes nothing.
    @Test func aTotalDeadlineAfterTheWholeBodyWasReadChangesNothing() async throws {
        let buffer = BodyBuffer(limits: .default)
        let timer = LateTimer()
        buffer.setTotalTimeout(.seconds(5), timer: timer)
        #expect(buffer.write(Data("all".utf8)))
        buffer.finish()
        #expect(try await buffer.next() == Data("all".utf8))
        timer.fire(0)
        #expect(try await buffer.next() == nil)
    }

    /// A reader that never quite catches up: the spill file stays within the backlog limit (a
    /// ring), and every byte is read in order (found by review: it grew with the whole stream).
    @Test func theSpillFileNeverGrowsPastTheBacklogLimit() async throws {
        let limit: Int64 = 6 << 20
        let buffer = BodyBuffer(limits: Limits(maxStreamBacklogBytes: limit))
        let chunkSize = 60 << 10  // not a divisor of the ring: writes and reads wrap mid-chunk
        // Byte n of the stream is n % 251: any chunk is a slice of this.
        let pattern = Data((0..<(251 + BodyBuffer.spillReadSize + chunkSize)).map { UInt8($0 % 251) })
        func slice(at offset: Int, count: Int) -> Data { pattern[(offset % 251)..<(offset % 251 + count)] }
        var (written, read) = (0, 0)
        func write() {
            #expect(buffer.write(slice(at: written, count: chunkSize)))
            written += chunkSize
        }
        for _ in 0..<85 { write() }  // the memory window, and ≈ 1 MiB on disk
        var largestFile: Int64 = 0
        var inOrder = true
        while written < 30 << 20 {
            let chunk = try #require(try await buffer.next())
            inOrder = inOrder && chunk == slice(at: read, count: chunk.count)
            read += chunk.count
            // The reader stays about 5 MiB behind.
            while written - read < 5 << 20 { write() }
            largestFile = max(largestFile, buffer.spillFileSize)
        }
        buffer.finish()
        while let chunk = try await buffer.next() {
            inOrder = inOrder && chunk == slice(at: read, count: chunk.count)
            read += chunk.count
        }
        #expect(inOrder)
        #expect(read == written)
        #expect(largestFile > 0 && largestFile <= limit, "the spill file reached \(largestFile) bytes")
    }

    @Test func noSpillFileIsEverVisible() async throws {
        let folder = FileManager.default.temporaryDirectory
        func spills() throws -> Set<String> {
            Set(
                try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
                    $0.hasPrefix("courier-stream-")
                })
        }
        let before = try spills()
        let buffer = BodyBuffer(limits: .default)
        for _ in 0..<100 { buffer.write(Data(count: 64 << 10)) }
        #expect(try spills() == before)
        buffer.terminate()
    }
}
