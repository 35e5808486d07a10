import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A streamed call's answer is its own value through the pipeline (issue 31): plugins' `process`
/// sees the head, and the body goes on beside it.
@Suite struct StreamAnswerTests {
    /// Answers every streamed head with `answer`, built from the head it saw.
    struct Rewrite: Plugin {
        let answer: @Sendable (Response) -> Result<Response, CourierError>
        func process(
            _ result: Result<Response, CourierError>, context: RequestContext
        ) async -> Result<Response, CourierError> {
            result.flatMap(answer)
        }
    }

    @Test func aHeadAPluginRewritesKeepsTheLiveBody() async throws {
        // A response of the plugin's own without data is a head: the stream's body still follows.
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["a", "b"])])
        let rewrite = Rewrite { head in
            .success(Response(statusCode: 299, data: Data(), request: head.request, response: head.response))
        }
        let provider = Provider<StreamTarget>(transport: transport, plugins: [rewrite])
        let stream = try await provider.stream(StreamTarget())
        #expect(stream.statusCode == 299)
        #expect(try await StreamingTests.collect(stream.chunks) == ["a", "b"])
    }

    @Test func aResponseWithDataFromAPluginIsTheBodyAndTheTransferStops() async throws {
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["live"], finished: false)])
        let rewrite = Rewrite { head in .success(Response(statusCode: 200, data: Data("cached".utf8))) }
        let provider = Provider<StreamTarget>(transport: transport, plugins: [rewrite])
        let stream = try await provider.stream(StreamTarget())
        #expect(transport.stopped(0))
        #expect(try await StreamingTests.collect(stream.chunks) == ["cached"])
    }

    @Test func aStreamedHeadAPluginRefusesStopsTheTransfer() async throws {
        let transport = ScriptedStreamTransport([.init(status: 200, chunks: ["a"], finished: false)])
        let refuse = Rewrite { head in .failure(.statusCode(head)) }
        let provider = Provider<StreamTarget>(transport: transport, plugins: [refuse])
        await #expect(throws: CourierError.self) { _ = try await provider.stream(StreamTarget()) }
        #expect(transport.stopped(0))
    }
}
