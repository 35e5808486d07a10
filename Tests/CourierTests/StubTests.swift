import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct StubTests {
    @Test func immediateStubAnswersWithSampleDataAndNeverTouchesTheTransport() async throws {
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(stubClosure: Provider.immediatelyStub, transport: transport)
        let response = try await provider.request(.item(id: 5))
        #expect(try response.map(Item.self) == Item(id: 5, name: "Item 5"))
        #expect(response.request?.url?.absoluteString == "https://api.example.com/v1/items/5")
        #expect(response.response?.statusCode == 200)
        #expect(transport.sent.isEmpty)
    }

    /// Issue 29: a `.networkResponse` sample's `HTTPURLResponse` is built only when read; what it
    /// says is what the eagerly built one said.
    @Test func networkResponseStubsHTTPURLResponseIsBuiltWhenReadWithTheSameContent() async throws {
        let provider = Provider<TestAPI>(
            endpointClosure: { target in
                var endpoint = try Endpoint(target: target)
                endpoint.sampleResponseClosure = { .networkResponse(418, Data("teapot".utf8)) }
                return endpoint
            },
            stubClosure: Provider.immediatelyStub
        )
        let response = try await provider.request(.item(id: 5))
        #expect(response.httpVersion == nil)
        #expect(response.value(forHTTPHeaderField: "Content-Type") == nil)
        let head = try #require(response.response)
        #expect(head.statusCode == 418)
        #expect(head.url?.absoluteString == "https://api.example.com/v1/items/5")
        #expect(head.allHeaderFields.isEmpty)
        #expect(head.expectedContentLength == -1)
        // Read twice: the same object.
        #expect(response.response === head)
        let metrics = try #require(response.metrics?.attempts.first?.transfer)
        #expect(metrics.httpVersion == nil)
    }

    /// A stub's head is built from the request's URL when first read: readers racing for it all
    /// get one object, and a body added afterwards keeps it.
    @Test func readersRacingForAStubsHeadAllGetOneObject() async throws {
        let provider = Provider<TestAPI>(
            endpointClosure: { target in
                var endpoint = try Endpoint(target: target)
                endpoint.sampleResponseClosure = { .networkResponse(204, Data()) }
                return endpoint
            },
            stubClosure: Provider.immediatelyStub
        )
        for _ in 0..<20 {
            let response = try await provider.request(.item(id: 7))
            let ids = await headObjectsSeenByRacingReaders(of: response)
            #expect(ids.count == 1)
            let head = try #require(response.response)
            #expect(ids.first == ObjectIdentifier(head))
            #expect(head.statusCode == 204)
            #expect(head.url?.path == "/v1/items/7")
            #expect(response.withBody(Data("x".utf8)).response === head)
        }
    }

    @Test func stubsRunTheEndpointAndRequestMappings() async throws {
        let provider = Provider<TestAPI>(
            endpointClosure: { target in
                try Endpoint(target: target).adding(headers: ["X-Endpoint": "1"])
            },
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                request.setValue("2", forHTTPHeaderField: "X-Request")
                return request
            },
            stubClosure: Provider.immediatelyStub
        )
        let response = try await provider.request(.plain)
        #expect(response.request?.value(forHTTPHeaderField: "X-Endpoint") == "1")
        #expect(response.request?.value(forHTTPHeaderField: "X-Request") == "2")
    }

    @Test func endpointMappingCanReplaceTheSampleResponse() async throws {
        let provider = Provider<TestAPI>(
            endpointClosure: { target in
                var endpoint = try Endpoint(target: target)
                endpoint.sampleResponseClosure = { .networkResponse(418, Data("teapot".utf8)) }
                return endpoint
            },
            stubClosure: Provider.immediatelyStub
        )
        let response = try await provider.request(.plain)
        #expect(response.statusCode == 418)
        #expect(try response.mapString() == "teapot")
    }

    @Test func fullResponseStubKeepsHeaders() async throws {
        struct Target: TargetType {
            var headers: [String: String] { [:] }
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "h" }
            var sampleResponse: SampleResponse {
                .response(
                    HTTPURLResponse(
                        url: URL(string: "https://api.example.com/h")!, statusCode: 201, httpVersion: "HTTP/1.1",
                        headerFields: ["X-Rate-Limit": "10", "Content-Type": "text/plain"])!,
                    Data("made".utf8))
            }
        }
        let provider = Provider<Target>(stubClosure: Provider.immediatelyStub)
        let response = try await provider.request(Target())
        #expect(response.statusCode == 201)
        #expect(response.value(forHTTPHeaderField: "x-rate-limit") == "10")
        #expect(response.data == Data("made".utf8))
    }

    @Test func networkErrorStubThrowsUnderlying() async {
        struct Target: TargetType {
            var headers: [String: String] { [:] }
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "" }
            var sampleResponse: SampleResponse { .networkError(URLError(.notConnectedToInternet)) }
        }
        let provider = Provider<Target>(stubClosure: Provider.immediatelyStub)
        await #expect {
            try await provider.request(Target())
        } throws: { error in
            guard case CourierError.underlying(let underlying, nil) = error else { return false }
            return (underlying as? URLError)?.code == .notConnectedToInternet
        }
    }

    @Test func stubBehaviorIsChosenPerTarget() async throws {
        let transport = RecordingTransport(statusCode: 299)
        let provider = Provider<TestAPI>(
            stubClosure: { target in
                if case .item = target { return .immediate }
                return .never
            },
            transport: transport
        )
        #expect(try await provider.request(.item(id: 1)).statusCode == 200)
        #expect(try await provider.request(.plain).statusCode == 299)
        #expect(transport.sent.count == 1)
    }

    @Test func delayedStubWaitsOnTheProvidersClock() async throws {
        let clock = TestClock()
        let provider = Provider<TestAPI>(stubClosure: Provider.delayedStub(.seconds(5)), clock: clock)
        let request = Task { try await provider.request(.item(id: 2)) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(4))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        let response = try await request.value
        #expect(try response.map(Item.self).id == 2)
    }

    @Test func delayedStubsWakeInDeadlineOrder() async throws {
        let clock = TestClock()
        let log = EventLog()
        let provider = Provider<TestAPI>(
            stubClosure: { target in
                if case .item(let id) = target { return .delayed(.seconds(id)) }
                return .immediate
            },
            clock: clock
        )
        let slow = Task {
            _ = try await provider.request(.item(id: 3))
            log.append("slow")
        }
        let fast = Task {
            _ = try await provider.request(.item(id: 1))
            log.append("fast")
        }
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(1))
        try await fast.value
        #expect(log.all == ["fast"])
        clock.advance(by: .seconds(2))
        try await slow.value
        #expect(log.all == ["fast", "slow"])
    }

    @Test func cancellingADelayedStubThrowsCancelled() async {
        let clock = TestClock()
        let provider = Provider<TestAPI>(stubClosure: Provider.delayedStub(.seconds(60)), clock: clock)
        let request = Task { try await provider.request(.plain) }
        await clock.waitForSleepers(1)
        request.cancel()
        let result = await request.result
        #expect((result.failure as? CourierError)?.isCancellation == true)
    }

    /// Many providers with different stubs, used at once, each see only their own.
    @Test(arguments: 0..<50)
    func providersAreIsolated(seed: Int) async throws {
        struct Echo: TargetType {
            var headers: [String: String] { [:] }
            let value: Int
            var baseURL: URL { URL(string: "https://isolated.example.com")! }
            var path: String { "echo" }
        }
        let provider = Provider<Echo>(
            endpointClosure: { target in
                var endpoint = try Endpoint(target: target)
                endpoint.sampleResponseClosure = { .networkResponse(200, Data("\(seed)-\(target.value)".utf8)) }
                return endpoint
            },
            stubClosure: Provider.immediatelyStub
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            for value in 0..<20 {
                group.addTask {
                    let response = try await provider.request(Echo(value: value))
                    #expect(try response.mapString() == "\(seed)-\(value)")
                }
            }
            try await group.waitForAll()
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
