@_spi(Testing) import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSessionTransport.invalidateAndCancel()`: the one way to end a transport's session early.
/// Its session is not public, because a caller who invalidated it and sent again made URLSession
/// trap ("Session invalidated"); a send after `invalidateAndCancel()` is a typed error instead.
@Suite(.timeLimit(.minutes(2))) struct TransportInvalidationTests {
    /// Sent after the transport was invalidated, through the transport or a provider: refused
    /// with `CourierError.invalidUse`, before anything is sent (port 9 on the loopback, where
    /// nothing answers, would fail otherwise). Invalidating twice is harmless.
    @Test func aSendAfterInvalidationIsRefused() async throws {
        let transport = URLSessionTransport()
        transport.invalidateAndCancel()
        transport.invalidateAndCancel()
        let request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:9/x")))
        let direct = await #expect(throws: (any Error).self) { try await transport.send(request) }
        #expect(InvalidationErrors.isClosedRefusal(direct))
        let streamed = await #expect(throws: (any Error).self) {
            try await transport.stream(Transfer(request: request))
        }
        #expect(InvalidationErrors.isClosedRefusal(streamed))
        let provider = Provider<Fault>(transport: transport)
        let viaProvider = await #expect(throws: (any Error).self) { try await provider.request(Fault(path: "ok")) }
        #expect(InvalidationErrors.isClosedRefusal(viaProvider))
    }

    /// The configuration can still be read, as a copy.
    @Test func theConfigurationIsACopy() {
        let configuration = URLSessionTransport.defaultConfiguration()
        configuration.timeoutIntervalForRequest = 17
        let transport = URLSessionTransport(configuration: configuration)
        #expect(transport.configuration.timeoutIntervalForRequest == 17)
        transport.configuration.timeoutIntervalForRequest = 5
        #expect(transport.configuration.timeoutIntervalForRequest == 17)
    }

    /// Transfers running when the transport is invalidated end with `CourierError.cancelled` (each
    /// had its head and 10 bytes, and the server then stalls until the client leaves), and the
    /// session is released once the transport is.
    @Test(.enabled(if: FaultServer.isAvailable, "needs COURIER_FAULT_URL (run scripts/test)"))
    func transfersInFlightEndCancelled() async throws {
        let base = try #require(FaultServer.baseURL)
        let (received, signal) = AsyncStream<Void>.makeStream()
        let session: WeakReference<URLSession>
        do {
            let transport = URLSessionTransport()
            session = WeakReference(transport.session)
            try await withThrowingTaskGroup(of: (any Error)?.self) { group in
                for _ in 0..<3 {
                    let transfer = Transfer(request: URLRequest(url: base.appendingPathComponent("stall-body"))) {
                        if case .received = $0 { signal.yield() }
                    }
                    group.addTask {
                        do {
                            _ = try await transport.send(transfer)
                            return nil
                        } catch {
                            return error
                        }
                    }
                }
                // Each transfer reports its first bytes once (the server sends them in one write).
                var started = 0
                for await _ in received {
                    started += 1
                    if started == 3 { break }
                }
                transport.invalidateAndCancel()
                for try await error in group {
                    #expect(InvalidationErrors.isCancelled(error), "\(String(describing: error))")
                }
            }
        }
        #expect(await eventually { session.isReleased })
    }

    /// Sends racing the invalidation, many times over: each ends with an answer, a cancel or the
    /// refusal, never a trap (a task made on the invalidated session) or a hang.
    @Test(.enabled(if: FaultServer.isAvailable, "needs COURIER_FAULT_URL (run scripts/test)"))
    func sendsRacingTheInvalidationEndTyped() async throws {
        let url = try #require(FaultServer.baseURL).appendingPathComponent("ok")
        for round in 0..<25 {
            let transport = URLSessionTransport()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        do {
                            let response = try await transport.send(URLRequest(url: url))
                            #expect(response.statusCode == 200)
                        } catch {
                            #expect(
                                InvalidationErrors.isCancelled(error) || InvalidationErrors.isClosedRefusal(error),
                                "\(error)")
                        }
                    }
                }
                // Early in some rounds, later in others.
                for _ in 0..<(round % 5) { await Task.yield() }
                transport.invalidateAndCancel()
            }
        }
    }
}
