import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Stress {
    @Suite(.timeLimit(.minutes(2))) struct DeduplicationStressTests {
        @Test func tenThousandIdenticalRequestsMakeOneCall() async throws {
            let transport = GatedTransport()
            let provider = Provider<DeduplicationTests.Call>(transport: transport, deduplication: .enabled)
            let count = 10_000
            try await withThrowingTaskGroup(of: Data.self) { group in
                for _ in 0..<count {
                    group.addTask { try await provider.request(DeduplicationTests.Call()).data }
                }
                await provider.waitForInflightWaiters(count)
                #expect(await provider.inflightWaiterCount == count)
                transport.release(data: Data("once".utf8))
                var answered = 0
                for try await data in group {
                    #expect(data == Data("once".utf8))
                    answered += 1
                }
                #expect(answered == count)
            }
            #expect(transport.calls == 1)
            #expect(await provider.inflightCount == 0)
        }

        /// 1,000 requests over a few keys, each cancelled (or not) at a random moment in a random
        /// stage; every caller is answered and the table ends empty. Repeated 20 times.
        @Test(arguments: 0..<20)
        func randomCancellationStorm(round: Int) async throws {
            struct Yielding: Plugin {
                let random: Locked<SeededRandom>
                func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
                    for _ in 0..<random.int(in: 0...2) { await Task.yield() }
                    return request
                }
            }
            let random = SeededRandom.forTest("randomCancellationStorm", salt: UInt64(round))
            let transport = GatedTransport()
            let provider = Provider<DeduplicationTests.Call>(
                endpointClosure: { target in
                    for _ in 0..<random.int(in: 0...2) { await Task.yield() }
                    return try Endpoint(target: target)
                },
                requestClosure: { endpoint in
                    for _ in 0..<random.int(in: 0...2) { await Task.yield() }
                    return try endpoint.urlRequest()
                },
                transport: transport,
                plugins: [Yielding(random: random)],
                deduplication: .enabled
            )
            let tasks = (0..<1_000).map { index in
                Task { () -> Result<Response, CourierError> in
                    do throws(CourierError) {
                        return .success(try await provider.request(DeduplicationTests.Call(id: index % 7)))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            for task in random.withLock({ tasks.shuffled(using: &$0) }) {
                if random.bool() { task.cancel() }
                for _ in 0..<random.int(in: 0...3) { await Task.yield() }
                if random.int(in: 0...49) == 0 { transport.release() }
            }
            // Answer whatever still waits, and every request that arrives later, until every caller
            // is answered; then one last request of the test's own wakes the releaser to end it.
            let done = Locked(false)
            let releaser = Task {
                while true {
                    await transport.waitForRequests(1)
                    transport.release()
                    if done.withLock({ $0 }) { return }
                }
            }
            for task in tasks { _ = await task.value }
            done.withLock { $0 = true }
            _ = try? await transport.send(URLRequest(url: URL(string: "https://api.example.com/last")!))
            await releaser.value
            for task in tasks {
                switch await task.value {
                case .success(let response): #expect(response.statusCode == 200)
                case .failure(let error): #expect(error.isCancellation, "\(error)")
                }
            }
            #expect(await provider.inflightCount == 0)
            #expect(await provider.inflightWaiterCount == 0)
        }
    }
}
