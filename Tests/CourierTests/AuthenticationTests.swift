import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(2))) struct AuthenticationTests {
    /// Tokens are "token-N"; refreshing gives "token-(N+1)" after passing `gate`.
    struct Counting: Authenticator {
        let refreshes = Locked(0)
        let gate: StageGate
        let failure: (any Error & Sendable)?

        init(
            gate: StageGate = {
                let gate = StageGate()
                gate.open()
                return gate
            }(), failure: (any Error & Sendable)? = nil
        ) {
            self.gate = gate
            self.failure = failure
        }

        func apply(_ credential: String, to request: inout URLRequest) {
            request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        }

        func refresh(_ credential: String) async throws -> String {
            refreshes.withLock { $0 += 1 }
            try await gate.pass()
            if let failure { throw failure }
            return "token-\(Int(credential.dropFirst(6))! + 1)"
        }
    }

    /// Accepts only `Bearer <accepted>`; answers 401 otherwise. Records what it saw.
    final class TokenServer: Transport {
        let accepted: String?
        let seen = Locked<[String]>([])
        init(accepting accepted: String?) { self.accepted = accepted }

        func send(_ transfer: Transfer) async throws -> Response {
            let request = transfer.request
            let header = request.value(forHTTPHeaderField: "Authorization") ?? ""
            seen.withLock { $0.append(header) }
            let ok = accepted.map { header == "Bearer \($0)" } ?? false
            return Response(statusCode: ok ? 200 : 401, data: Data(), request: request)
        }
    }

    @Test func oneHundredConcurrent401sCauseOneRefresh() async throws {
        let authenticator = Counting()
        let authentication = Authentication(authenticator, credential: "token-0")
        let server = TokenServer(accepting: "token-1")
        let provider = Provider<TestAPI>(transport: server, authentication: authentication)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for id in 0..<100 {
                group.addTask { try await provider.request(.item(id: id)).statusCode }
            }
            for try await code in group { #expect(code == 200) }
        }
        #expect(authenticator.refreshes.withLock { $0 } == 1)
        #expect(await authentication.refreshCount == 1)
        #expect(await authentication.credential == "token-1")
    }

    @Test func requestsStartedDuringARefreshWaitForIt() async throws {
        let gate = StageGate()
        let authenticator = Counting(gate: gate)
        let authentication = Authentication(authenticator, credential: "token-0")
        let server = TokenServer(accepting: "token-1")
        let provider = Provider<TestAPI>(transport: server, authentication: authentication)
        let first = Task { try await provider.request(.plain) }
        await gate.waitForArrivals(1)  // the refresh is running
        let second = Task { try await provider.request(.item(id: 2)) }
        // The second request must not go out with the stale token while the refresh runs.
        for _ in 0..<1_000 { await Task.yield() }
        #expect(server.seen.withLock { $0 } == ["Bearer token-0"])
        gate.open()
        #expect(try await first.value.statusCode == 200)
        #expect(try await second.value.statusCode == 200)
        #expect(server.seen.withLock { $0 }.filter { $0 == "Bearer token-0" }.count == 1)
        #expect(authenticator.refreshes.withLock { $0 } == 1)
    }

    @Test func refreshFailureFailsEveryWaitingRequest() async {
        struct Revoked: Error {}
        let gate = StageGate()
        let authentication = Authentication(Counting(gate: gate, failure: Revoked()), credential: "token-0")
        let provider = Provider<TestAPI>(transport: TokenServer(accepting: "token-1"), authentication: authentication)
        let tasks = (0..<10).map { id in Task { try await provider.request(.item(id: id)) } }
        await gate.waitForArrivals(1)
        gate.open()
        for task in tasks {
            let error = (await task.result).failure as? CourierError
            guard case .authentication(.refreshFailed(let cause)) = error else {
                Issue.record("expected refreshFailed, got \(String(describing: error))")
                continue
            }
            #expect(cause is Revoked)
        }
    }

    @Test func refreshWindowStopsLoops() async {
        let clock = TestClock()
        let authenticator = Counting()
        let authentication = Authentication(
            authenticator, credential: "token-0", maxRefreshes: 2, refreshWindow: .seconds(30), clock: clock)
        // A server that refuses every token.
        let provider = Provider<TestAPI>(transport: TokenServer(accepting: nil), authentication: authentication)
        for _ in 0..<2 {
            let error = await #expect(throws: CourierError.self) {
                try await provider.request(.validated(0, .successCodes))
            }
            // The refresh is not a retry: the re-sent request's 401 arrives as itself.
            guard case .statusCode(let response)? = error, response.statusCode == 401 else {
                Issue.record("expected the refreshed re-send to fail with 401, got \(String(describing: error))")
                return
            }
        }
        let error = await #expect(throws: CourierError.self) {
            try await provider.request(.validated(0, .successCodes))
        }
        guard case .authentication(.refreshLimitReached(2, .seconds(30)))? = error else {
            Issue.record("expected refreshLimitReached, got \(String(describing: error))")
            return
        }
        #expect(authenticator.refreshes.withLock { $0 } == 2)
        // After the window, refreshing is allowed again.
        clock.advance(by: .seconds(31))
        let later = await #expect(throws: CourierError.self) {
            try await provider.request(.validated(0, .successCodes))
        }
        guard case .statusCode(let refused)? = later, refused.statusCode == 401 else {
            Issue.record("expected a refresh after the window, got \(String(describing: later))")
            return
        }
        #expect(authenticator.refreshes.withLock { $0 } == 3)
    }

    /// Found by review: a 401 from the host a redirect led to (the credential stripped on the
    /// way) refreshed the credential; a hostile redirect target could rotate tokens or use up
    /// the refresh limit on every call. Only the origin the credential went to can refuse it.
    @Test func aRefusalFromWhereARedirectLedRefreshesNothing() async throws {
        let authenticator = Counting()
        let transport = RecordingTransport { request in
            Response(
                statusCode: 401, data: Data(), request: request, url: URL(string: "https://elsewhere.test/login")!,
                headerFields: [])
        }
        let provider = Provider<TestAPI>(
            transport: transport, authentication: Authentication(authenticator, credential: "token-0"))
        await #expect(throws: CourierError.self) { try await provider.request(.validated(200, .successCodes)) }
        #expect(authenticator.refreshes.withLock { $0 } == 0)
        #expect(transport.sent.count == 1)

        // Nor one from the origin itself, reached again through another (away and back: the
        // credential stripped on the way; found by review of the fix above).
        let bounced = RecordingTransport { request in
            var stripped = request
            stripped.setValue(nil, forHTTPHeaderField: "Authorization")
            return Response(statusCode: 401, data: Data(), request: stripped, url: request.url!, headerFields: [])
        }
        let again = Provider<TestAPI>(
            transport: bounced, authentication: Authentication(authenticator, credential: "token-0"))
        await #expect(throws: CourierError.self) { try await again.request(.validated(200, .successCodes)) }
        #expect(authenticator.refreshes.withLock { $0 } == 0)
    }

    /// Found by review: a credential an authenticator put in a header of its own
    /// (`X-MyApp-Session`) followed a redirect to another origin, which dropped only the names of
    /// `Limits.credentialHeaders`. The fields signing sets are dropped there too.
    @Test func headersTheAuthenticatorSetsNeverFollowARedirectToAnotherOrigin() async throws {
        struct Session: Authenticator {
            func apply(_ credential: String, to request: inout URLRequest) {
                request.setValue(credential, forHTTPHeaderField: "X-MyApp-Session")
            }
            func refresh(_ credential: String) async throws -> String { credential }
        }
        /// Follows one redirect with Courier's rules and records the next hop's headers.
        final class Redirecting: Transport {
            let location: String
            let hops = Locked<[[String: String]]>([])
            init(to location: String) { self.location = location }
            func send(_ transfer: Transfer) async throws -> Response {
                let redirect = Response(
                    statusCode: 302, data: Data(), request: transfer.request, url: transfer.request.url!,
                    headerFields: [("Location", location)])
                let next = try transfer.following(redirect: redirect, redirects: 0)
                hops.withLock { $0.append(next?.request.allHTTPHeaderFields ?? [:]) }
                return Response(statusCode: 200, data: Data(), request: transfer.request)
            }
        }
        for (location, kept) in [("https://elsewhere.test/next", false), ("/same-origin", true)] {
            let transport = Redirecting(to: location)
            let provider = Provider<TestAPI>(
                transport: transport, authentication: Authentication(Session(), credential: "s3cret"))
            _ = try await provider.request(.item(id: 1))
            let hop = try #require(transport.hops.withLock { $0.first })
            let session = hop.first { $0.key.caseInsensitiveCompare("X-MyApp-Session") == .orderedSame }?.value
            #expect((session == "s3cret") == kept, "\(location): \(hop)")
        }
        let fields = SignedRequest.changedFields(
            from: URLRequest(url: URL(string: "https://a.test")!),
            to: {
                var request = URLRequest(url: URL(string: "https://a.test")!)
                request.setValue("1", forHTTPHeaderField: "X-A")
                return request
            }())
        #expect(fields.map { $0.lowercased() } == ["x-a"])
    }

    @Test func customRefreshPredicate() async throws {
        struct On403: Authenticator {
            func apply(_ credential: String, to request: inout URLRequest) {
                request.setValue(credential, forHTTPHeaderField: "X-Key")
            }
            func refresh(_ credential: String) async throws -> String { "fresh" }
            func requiresRefresh(_ response: Response) -> Bool { response.statusCode == 403 }
        }
        let transport = RecordingTransport { request in
            let fresh = request.value(forHTTPHeaderField: "X-Key") == "fresh"
            return Response(statusCode: fresh ? 200 : 403, data: Data(), request: request)
        }
        let provider = Provider<TestAPI>(
            transport: transport, authentication: Authentication(On403(), credential: "stale"))
        #expect(try await provider.request(.plain).statusCode == 200)
        #expect(transport.sent.compactMap { $0.value(forHTTPHeaderField: "X-Key") } == ["stale", "fresh"])
    }

    /// The usual setup: the token endpoint is a target of the same API, asked through the same
    /// provider. Its request is sent unsigned and cannot start a refresh (it used to wait for the
    /// refresh it belonged to, forever).
    @Test func aRefreshMayAskForTheTokenThroughTheSameProvider() async throws {
        struct ThroughProvider: Authenticator {
            let provider = Locked<Provider<TestAPI>?>(nil)
            func apply(_ credential: String, to request: inout URLRequest) {
                request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
            }
            func refresh(_ credential: String) async throws -> String {
                guard let provider = provider.withLock({ $0 }) else { throw CancellationError() }
                return String(decoding: try await provider.request(.item(id: 99)).data, as: UTF8.self)
            }
        }
        let transport = RecordingTransport { request in
            let authorization = request.value(forHTTPHeaderField: "Authorization")
            if request.url?.path.hasSuffix("items/99") == true {
                // The token endpoint: a signed request would be refused (and, before, would loop).
                return Response(
                    statusCode: authorization == nil ? 200 : 401, data: Data("token-1".utf8), request: request)
            }
            return Response(statusCode: authorization == "Bearer token-1" ? 200 : 401, data: Data(), request: request)
        }
        let authenticator = ThroughProvider()
        let authentication = Authentication(authenticator, credential: "token-0")
        let provider = Provider<TestAPI>(transport: transport, authentication: authentication)
        authenticator.provider.withLock { $0 = provider }
        // The provider holds the authenticator that holds the provider: broken when the test ends.
        defer { authenticator.provider.withLock { $0 = nil } }
        #expect(try await provider.request(.plain).statusCode == 200)
        #expect(
            transport.sent.map { $0.value(forHTTPHeaderField: "Authorization") } == [
                "Bearer token-0", nil, "Bearer token-1",
            ])
        #expect(await authentication.refreshCount == 1)
    }

    /// A task spawned inside a refresh inherits its task-locals: once the refresh is over, its
    /// requests are signed like any other (they used to go out unsigned for good).
    @Test func aTaskSpawnedByARefreshIsSignedOnceTheRefreshIsOver() async throws {
        struct Spawning: Authenticator {
            let provider = Locked<Provider<TestAPI>?>(nil)
            let spawned = Locked<Task<Response, any Error>?>(nil)
            let gate = StageGate()
            func apply(_ credential: String, to request: inout URLRequest) {
                request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
            }
            func refresh(_ credential: String) async throws -> String {
                guard let provider = provider.withLock({ $0 }) else { throw CancellationError() }
                let gate = gate
                // A prefetch started by the refresh that goes on after it.
                spawned.withLock {
                    $0 = Task {
                        try await gate.pass()
                        return try await provider.request(.item(id: 7))
                    }
                }
                return "token-1"
            }
        }
        let transport = RecordingTransport { request in
            let authorization = request.value(forHTTPHeaderField: "Authorization")
            return Response(statusCode: authorization == "Bearer token-1" ? 200 : 401, data: Data(), request: request)
        }
        let authenticator = Spawning()
        let authentication = Authentication(authenticator, credential: "token-0")
        let provider = Provider<TestAPI>(transport: transport, authentication: authentication)
        authenticator.provider.withLock { $0 = provider }
        defer { authenticator.provider.withLock { $0 = nil } }
        #expect(try await provider.request(.plain).statusCode == 200)
        #expect(await authentication.isRefreshing == false)
        authenticator.gate.open()
        let spawned = try #require(authenticator.spawned.withLock { $0 })
        #expect(try await spawned.value.statusCode == 200)
        #expect(transport.sent.last?.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
    }
}
