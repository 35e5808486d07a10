import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A stubbed call reads its sample once per attempt, whatever the call's mode: a sample that
/// answers differently from one read to the next (a scripted sequence) gives each attempt the
/// next answer, never skips one.
@Suite(.timeLimit(.minutes(2))) struct SampleReadOnceTests {
    /// A target whose sample is a script: each read takes the next answer.
    struct Scripted: TargetType {
        let reads: Locked<Int>
        // Large enough not to fit an existential's inline buffer (more than three words).
        let padding = (0, 0, 0, 0)
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "script" }
        var headers: [String: String] { [:] }
        var sampleResponse: SampleResponse {
            let read = reads.withLock { reads in
                reads += 1
                return reads
            }
            return .networkResponse(200 + read, Data("answer \(read)".utf8))
        }
    }

    /// A stream call on a sample that is not `.stream` (answered whole, then handed over as a
    /// stream) read the sample twice and answered with the second read.
    @Test func aStreamCallOnAWholeSampleReadsItOnce() async throws {
        let reads = Locked(0)
        let provider = Provider<Scripted>(stubClosure: Provider.immediatelyStub)
        let stream = try await provider.stream(Scripted(reads: reads))
        var body = Data()
        for try await chunk in stream.chunks { body.append(chunk) }
        #expect(stream.head.statusCode == 201)
        #expect(String(decoding: body, as: UTF8.self) == "answer 1")
        #expect(reads.withLock { $0 } == 1)
    }

    /// The same through a sample set on the endpoint (`sampleResponseClosure`), delayed.
    @Test func aDelayedStreamCallOnAnEndpointsWholeSampleReadsItOnce() async throws {
        let reads = Locked(0)
        let clock = TestClock()
        let provider = Provider<Scripted>(
            endpointClosure: { target in
                var endpoint = try Endpoint(target: target)
                endpoint.sampleResponseClosure = {
                    let read = reads.withLock { reads in
                        reads += 1
                        return reads
                    }
                    return .networkResponse(200 + read, Data("closure \(read)".utf8))
                }
                return endpoint
            },
            stubClosure: { _ in .delayed(.seconds(1)) }, clock: clock)
        let call = Task { try await provider.stream(Scripted(reads: Locked(0))) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        let stream = try await call.value
        var body = Data()
        for try await chunk in stream.chunks { body.append(chunk) }
        #expect(stream.head.statusCode == 201)
        #expect(String(decoding: body, as: UTF8.self) == "closure 1")
        #expect(reads.withLock { $0 } == 1)
    }

    /// A delayed stub reads its sample when the delay is over, in a stream call as in a buffered
    /// one (a stream call read it before the delay: what changed during the delay was missed).
    @Test(arguments: [false, true]) func aDelayedStubReadsItsSampleAfterTheDelay(streamed: Bool) async throws {
        let clock = TestClock()
        let start = clock.now
        let provider = Provider<Scripted>(
            endpointClosure: { target in
                var endpoint = try Endpoint(target: target)
                endpoint.sampleResponseClosure = { .networkResponse(clock.now == start ? 299 : 200, Data()) }
                return endpoint
            },
            stubClosure: { _ in .delayed(.seconds(1)) }, clock: clock)
        let target = Scripted(reads: Locked(0))
        let call = Task {
            if streamed {
                let stream = try await provider.stream(target)
                for try await _ in stream.chunks {}
                return stream.head.statusCode
            }
            return try await provider.request(target).statusCode
        }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(try await call.value == 200)
    }
}
