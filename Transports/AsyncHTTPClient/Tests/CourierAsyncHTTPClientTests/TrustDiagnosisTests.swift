import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import CourierAsyncHTTPClient

/// The second handshake that reads why a certificate was refused ends when its caller is
/// cancelled, however long the server takes (found by review: it waited for the handshake or
/// its bound).
@Suite(.timeLimit(.minutes(1))) struct TrustDiagnosisTests {
    @Test func aCancelledDiagnosisEndsAtOnceAgainstASilentServer() async throws {
        // Accepts connections and never says a word: the handshake never ends.
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)
        // A bound far past the test's own time limit: only the cancel can end it in time.
        let diagnosis = Task { await ServerTrust.diagnose(host: "127.0.0.1", port: port, timeout: .hours(1)) }
        // Let it connect (or not): either way, the cancel ends it.
        await Task.yield()
        diagnosis.cancel()
        #expect(await diagnosis.value == .other)
        try await server.close()
    }
}
