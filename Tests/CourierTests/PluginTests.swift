import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct PluginTests {
    @Test(arguments: [false, true])
    func hooksRunInDocumentedOrder(stubbed: Bool) async throws {
        let log = EventLog()
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            stubClosure: { _ in stubbed ? .immediate : .never },
            transport: transport,
            plugins: [RecordingPlugin("A", log: log), RecordingPlugin("B", log: log)]
        )
        _ = try await provider.request(.plain)
        #expect(
            log.all == [
                "A.prepare", "B.prepare", "A.willSend", "B.willSend",
                "A.didReceive(200)", "B.didReceive(200)", "A.process(200)", "B.process(200)",
            ])
        #expect(transport.sent.count == (stubbed ? 0 : 1))
    }

    @Test func prepareChainsAndReachesTheTransport() async throws {
        let log = EventLog()
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            transport: transport,
            plugins: [
                RecordingPlugin("A", log: log, headerToAdd: ("X-Chain", "a")),
                RecordingPlugin("B", log: log, headerToAdd: ("X-Chain", "b")),
            ]
        )
        let response = try await provider.request(.plain)
        #expect(transport.sent.first?.value(forHTTPHeaderField: "X-Chain") == "a,b")
        #expect(response.request?.value(forHTTPHeaderField: "X-Chain") == "a,b")
    }

    @Test func processTransformsInOrder() async throws {
        let log = EventLog()
        let provider = Provider<TestAPI>(
            stubClosure: Provider.immediatelyStub,
            plugins: [
                RecordingPlugin("A", log: log) { _ in .success(Response(statusCode: 201, data: Data())) },
                RecordingPlugin("B", log: log) { result in
                    result.map { Response(statusCode: $0.statusCode + 1, data: Data("b".utf8)) }
                },
            ]
        )
        let response = try await provider.request(.plain)
        #expect(response.statusCode == 202)
        #expect(log.all.suffix(2) == ["A.process(200)", "B.process(201)"])
    }

    @Test func processCanTurnAFailureIntoSuccess() async throws {
        let provider = Provider<TestAPI>(
            stubClosure: Provider.immediatelyStub,
            plugins: [RecordingPlugin("A", log: EventLog()) { _ in .success(Response(statusCode: 200, data: Data())) }]
        )
        let response = try await provider.request(.validated(500, .successCodes))
        #expect(response.statusCode == 200)
    }

    @Test func failingRequestMappingSkipsPrepareWillSendDidReceiveButNotProcess() async {
        struct Refused: Error {}
        let log = EventLog()
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            requestClosure: { _ in throw Refused() },
            transport: transport,
            plugins: [RecordingPlugin("A", log: log), RecordingPlugin("B", log: log)]
        )
        await #expect {
            try await provider.request(.plain)
        } throws: { error in
            guard case CourierError.underlying(let underlying, nil) = error else { return false }
            return underlying is Refused
        }
        #expect(log.all == ["A.process(error)", "B.process(error)"])
        #expect(transport.sent.isEmpty)
    }

    @Test func failingEndpointMappingGoesThroughProcess() async {
        let log = EventLog()
        let provider = Provider<PathTarget>(
            transport: RecordingTransport(), plugins: [RecordingPlugin("A", log: log)])
        await #expect(throws: CourierError.self) {
            try await provider.request(PathTarget("no-scheme", "x"))
        }
        #expect(log.all == ["A.process(requestMapping)"])
    }

    @Test func failingPrepareStopsTheRequest() async {
        struct Unauthorized: Error {}
        struct Failing: Plugin {
            func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
                throw Unauthorized()
            }
        }
        let log = EventLog()
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            transport: transport,
            plugins: [RecordingPlugin("A", log: log), Failing(), RecordingPlugin("C", log: log)])
        await #expect(throws: CourierError.self) { try await provider.request(.plain) }
        #expect(log.all == ["A.prepare", "A.process(error)", "C.process(error)"])
        #expect(transport.sent.isEmpty)
    }

    @Test func validationFailureReachesDidReceiveAndProcess() async {
        let log = EventLog()
        let provider = Provider<TestAPI>(
            stubClosure: Provider.immediatelyStub, plugins: [RecordingPlugin("A", log: log)])
        await #expect(throws: CourierError.self) { try await provider.request(.validated(404, .successCodes)) }
        #expect(log.all == ["A.prepare", "A.willSend", "A.didReceive(statusCode 404)", "A.process(statusCode 404)"])
    }

    @Test func pluginsSeeTheTargetInsideAMultiTarget() async throws {
        struct TypeRecorder: Plugin {
            let log: EventLog
            func willSend(_ request: URLRequest, context: RequestContext) async {
                log.append("\(type(of: context.target))")
            }
        }
        let log = EventLog()
        let provider = Provider<MultiTarget>(
            stubClosure: Provider.immediatelyStub, plugins: [TypeRecorder(log: log)])
        _ = try await provider.request(MultiTarget(TestAPI.plain))
        _ = try await provider.request(MultiTarget(UserResource(id: 1)))
        _ = try await provider.request(MultiTarget(MultiTarget(UserResource(id: 1))))
        #expect(log.all == ["TestAPI", "UserResource", "UserResource"])
    }

    @Test func defaultHooksDoNothing() async throws {
        struct Empty: Plugin {}
        let provider = Provider<TestAPI>(stubClosure: Provider.immediatelyStub, plugins: [Empty()])
        let response = try await provider.request(.item(id: 1))
        #expect(response.statusCode == 200)
        #expect(response.data == TestAPI.item(id: 1).sampleData)
    }
}
