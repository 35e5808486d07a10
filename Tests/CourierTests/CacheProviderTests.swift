import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The cache in front of a transport, end to end through the provider, on a test clock.
@Suite(.timeLimit(.minutes(2))) struct CacheProviderTests {
    struct Item: TargetType {
        var path = "items/1"
        var method: HTTPMethod = .get
        var headers: [String: String] = [:]
        var validation: ValidationType = .none
        var cachePolicy: CachePolicy = .protocolRules
        var task: HTTPTask = .plain
        var baseURL: URL { URL(string: "https://api.example.com")! }
    }

    /// A server: answers with `headers` and a body that counts its full answers, and `304` to a
    /// matching `If-None-Match`.
    final class Origin: Sendable {
        let served = Locked(0)
        let headers: [String: String]
        let etag: String?

        init(headers: [String: String], etag: String? = nil) {
            self.headers = headers
            self.etag = etag
        }

        var answer: StubAnswer {
            .handler { request in
                var headers = self.headers
                if let etag = self.etag { headers["ETag"] = etag }
                if let etag = self.etag, request.value(forHTTPHeaderField: "If-None-Match") == etag {
                    headers["X-Revalidated"] = "yes"
                    return Response(
                        statusCode: 304, data: Data(), request: request, url: request.url!,
                        headerFields: headers.map { ($0.key, $0.value) })
                }
                let count = self.served.withLock {
                    $0 += 1
                    return $0
                }
                return Response(
                    statusCode: 200, data: Data("body \(count)".utf8), request: request, url: request.url!,
                    headerFields: headers.map { ($0.key, $0.value) })
            }
        }
    }

    struct Setup {
        let clock = TestClock()
        let transport = StubTransport()
        let recorder = CacheStatusRecorder()
        let storage = MemoryCacheStorage()
        let provider: Provider<Item>

        init(_ answer: StubAnswer, plugins: [any Plugin] = [], retryPolicy: RetryPolicy = .disabled) {
            transport.on({ _ in true }, answer)
            let cache = HTTPCache(storage: storage, now: clock.wallClock())
            provider = Provider<Item>(
                transport: transport, plugins: [recorder] + plugins, clock: clock, retryPolicy: retryPolicy,
                cache: cache)
        }
    }

    @Test func aFreshResponseAnswersWithoutTheTransport() async throws {
        let setup = Setup(Origin(headers: ["Cache-Control": "max-age=60"]).answer)
        let first = try await setup.provider.request(Item())
        setup.clock.advance(by: .seconds(30))
        let second = try await setup.provider.request(Item())
        #expect(first.cacheStatus == .network)
        #expect(second.cacheStatus == .hit)
        #expect(second.data == first.data)
        #expect(second.value(forHTTPHeaderField: "Age") == "30")
        #expect(second.metrics?.cacheStatus == .hit)
        #expect(setup.transport.requests.count == 1)
        #expect(setup.recorder.statuses == [.network, .hit])
    }

    /// A hit carries the stored fields with one `Age`, the current one, whatever the case of the
    /// stored `Age` fields (issue 29: the answer's fields are now written straight into the head).
    /// The entry is rewritten in the storage: FoundationNetworking capitalizes the names of what a
    /// transport answers, so only a storage (a disk entry, another writer) holds other spellings.
    @Test func aHitCarriesTheStoredFieldsWithOneCurrentAge() async throws {
        let setup = Setup(Origin(headers: ["Cache-Control": "max-age=600", "X-Kept": "yes"]).answer)
        _ = try await setup.provider.request(Item())
        let key = "GET https://api.example.com/items/1"
        var stored = try #require(await setup.storage.response(forKey: key))
        stored.headers = stored.headers.filter { $0.key.lowercased() != "age" }
        stored.headers["age"] = "10"
        stored.headers["AGE"] = "10"
        await setup.storage.store(stored, forKey: key)
        setup.clock.advance(by: .seconds(30))
        let hit = try await setup.provider.request(Item())
        #expect(hit.cacheStatus == .hit)
        // One value: a stored `Age` left beside the new one would be joined to it ("10, 40").
        #expect(hit.value(forHTTPHeaderField: "Age") == "40")
        #expect(hit.value(forHTTPHeaderField: "x-kept") == "yes")
        #expect(hit.value(forHTTPHeaderField: "Cache-Control") == "max-age=600")
        #expect(setup.transport.requests.count == 1)
    }

    /// A `MultiTarget`'s calls use the wrapped target's cache policy (the pipeline reads it off
    /// the target plugins see, issue 29).
    @Test func aMultiTargetUsesTheWrappedTargetsCachePolicy() async throws {
        let clock = TestClock()
        let transport = StubTransport()
        transport.on({ _ in true }, Origin(headers: ["Cache-Control": "max-age=60"]).answer)
        let cache = HTTPCache(storage: MemoryCacheStorage(), now: clock.wallClock())
        let provider = Provider<MultiTarget>(transport: transport, clock: clock, cache: cache)
        _ = try await provider.request(MultiTarget(Item()))
        #expect(try await provider.request(MultiTarget(Item())).cacheStatus == .hit)
        #expect(try await provider.request(MultiTarget(Item(cachePolicy: .networkOnly))).cacheStatus == .network)
        #expect(transport.requests.count == 2)
    }

    @Test func aStaleResponseIsRevalidatedWithItsETag() async throws {
        let origin = Origin(headers: ["Cache-Control": "max-age=60"], etag: "\"v1\"")
        let setup = Setup(origin.answer)
        _ = try await setup.provider.request(Item())
        setup.clock.advance(by: .seconds(61))
        let revalidated = try await setup.provider.request(Item())
        #expect(revalidated.cacheStatus == .revalidated)
        #expect(revalidated.statusCode == 200)
        #expect(String(decoding: revalidated.data, as: UTF8.self) == "body 1")
        #expect(revalidated.value(forHTTPHeaderField: "X-Revalidated") == "yes")  // the 304's headers
        #expect(setup.transport.requests.last?.request.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        // The 304 freshened the entry: fresh again for another 60 seconds.
        setup.clock.advance(by: .seconds(30))
        #expect(try await setup.provider.request(Item()).cacheStatus == .hit)
        #expect(setup.transport.requests.count == 2)
        #expect(origin.served.withLock { $0 } == 1)
    }

    /// Progress of a cached answer: a fresh hit yields the completed event alone; a revalidation
    /// first reports the `304`'s head (0 bytes, no fraction), then completes with the stored body.
    @Test func progressOfACachedAnswer() async throws {
        let setup = Setup(Origin(headers: ["Cache-Control": "max-age=60"], etag: "\"v1\"").answer)
        _ = try await setup.provider.request(Item())
        var fresh: [ProgressEvent] = []
        for try await event in setup.provider.requestWithProgress(Item()) { fresh.append(event) }
        #expect(fresh.count == 1)
        #expect(fresh.first?.response?.cacheStatus == .hit)
        #expect(fresh.first?.fraction == 1)
        setup.clock.advance(by: .seconds(61))
        var revalidated: [ProgressEvent] = []
        for try await event in setup.provider.requestWithProgress(Item()) { revalidated.append(event) }
        #expect(revalidated.count == 2)
        #expect(revalidated.first?.download == ProgressEvent.Bytes(completed: 0, total: 0))
        #expect(revalidated.first?.fraction == nil)
        #expect(revalidated.first?.isCompleted == false)
        let last = try #require(revalidated.last?.response)
        #expect(last.cacheStatus == .revalidated)
        #expect(String(decoding: last.data, as: UTF8.self) == "body 1")
        #expect(revalidated.last?.fraction == 1)
    }

    /// A response the transport reached through a redirect (its URL is another one, or it counted
    /// a hop) is not stored under the URL asked for: a one-time 302 to another host must not make
    /// that host's answer this URL's for as long as that host says.
    @Test func aRedirectedResponseIsNotStoredUnderTheURLAskedFor() async throws {
        let served = Locked(0)
        let setup = Setup(
            .handler { request in
                let count = served.withLock {
                    $0 += 1
                    return $0
                }
                let headers = [("Cache-Control", "max-age=3600")]
                if count == 1 {
                    // Where the transport ended up after following a redirect elsewhere.
                    return Response(
                        statusCode: 200, data: Data("elsewhere".utf8), request: request,
                        url: URL(string: "https://evil.example.net/landing")!, headerFields: headers)
                }
                if count == 2 {
                    // The same URL after a hop (a redirect loop back to it): also not this URL's answer.
                    return Response(
                        statusCode: 200, data: Data("after a hop".utf8), request: request, url: request.url!,
                        headerFields: headers, transferMetrics: TransferMetrics(redirects: 1))
                }
                return Response(
                    statusCode: 200, data: Data("own".utf8), request: request, url: request.url!,
                    headerFields: headers, transferMetrics: TransferMetrics(redirects: 0))
            })
        #expect(try await setup.provider.request(Item()).cacheStatus == .network)
        #expect(try await setup.provider.request(Item()).cacheStatus == .network)
        #expect(try await setup.provider.request(Item()).cacheStatus == .network)
        let hit = try await setup.provider.request(Item())
        #expect(hit.cacheStatus == .hit)
        #expect(String(decoding: hit.data, as: UTF8.self) == "own")
        #expect(served.withLock { $0 } == 3)
    }

    /// A GET with a body (a search API, `Limits.allowsBodyInGETAndHEAD`) is never answered with
    /// the response to another body: it goes to the network as it is. Found by review.
    @Test func aGETWithABodyIsNotAnsweredWithAnotherBodysResponse() async throws {
        struct Search: TargetType {
            var query: String
            var baseURL: URL { URL(string: "https://search.example.com")! }
            var path: String { "index/_search" }
            var headers: [String: String] { [:] }
            var task: HTTPTask { .data(Data(query.utf8)) }
            var limits: Limits? { Limits(allowsBodyInGETAndHEAD: true) }
            var cachePolicy: CachePolicy { .protocolRules }
        }
        let transport = StubTransport()
        transport.on(
            { _ in true },
            .handler { request in
                Response(
                    statusCode: 200, data: request.httpBody ?? Data(), request: request, url: request.url!,
                    headerFields: [("Cache-Control", "max-age=60")])
            })
        let provider = Provider<Search>(transport: transport, cache: HTTPCache(storage: MemoryCacheStorage()))
        _ = try await provider.request(Search(query: "a"))
        let second = try await provider.request(Search(query: "b"))
        #expect(second.data == Data("b".utf8))
        #expect(second.cacheStatus == .network)
        #expect(transport.requests.count == 2)
    }

    /// A 304 that answers the validators the cache added, but from the end of a redirect, is not
    /// handed to a caller who sent none: the request goes again without validators, and the
    /// caller gets a whole answer. Found by review.
    @Test func a304ReachedThroughARedirectIsNotTheAnswerToAPlainRequest() async throws {
        let sent = Locked<[String?]>([])
        let setup = Setup(
            .handler { request in
                let validator = request.value(forHTTPHeaderField: "If-None-Match")
                sent.withLock { $0.append(validator) }
                if validator != nil {
                    return Response(
                        statusCode: 304, data: Data(), request: request,
                        url: URL(string: "https://api.example.com/v2/items/1")!, headerFields: [("ETag", "\"abc\"")],
                        transferMetrics: TransferMetrics(redirects: 1))
                }
                return Response(
                    statusCode: 200, data: Data("body".utf8), request: request, url: request.url!,
                    headerFields: [("Cache-Control", "max-age=0"), ("ETag", "\"abc\"")],
                    transferMetrics: TransferMetrics(redirects: 0))
            })
        _ = try await setup.provider.request(Item())
        let second = try await setup.provider.request(Item())
        #expect(second.statusCode == 200)
        #expect(String(decoding: second.data, as: UTF8.self) == "body")
        #expect(sent.withLock { $0 } == [nil, "\"abc\"", nil])
    }

    /// A response stored for a request with `Authorization` (the target opted in) answers those
    /// credentials only: another user's token, or none, goes to the network, whatever the
    /// response's `Vary` says (a server that forgets `Vary: Authorization` must not leak one
    /// user's answer to another through a shared provider).
    @Test func anAuthorizedResponseAnswersOnlyTheSameCredentials() async throws {
        let origin = Origin(headers: ["Cache-Control": "max-age=600"])
        let setup = Setup(origin.answer)
        let policy = CachePolicy.protocolRules.storingAuthorizedResponses()
        let alice = Item(headers: ["Authorization": "Bearer alice"], cachePolicy: policy)
        let bob = Item(headers: ["Authorization": "Bearer bob"], cachePolicy: policy)
        let nobody = Item(cachePolicy: policy)
        #expect(try await setup.provider.request(alice).cacheStatus == .network)
        #expect(try await setup.provider.request(alice).cacheStatus == .hit)
        let bobs = try await setup.provider.request(bob)
        #expect(bobs.cacheStatus == .network)
        #expect(String(decoding: bobs.data, as: UTF8.self) == "body 2")
        #expect(try await setup.provider.request(bob).cacheStatus == .hit)
        let anonymous = try await setup.provider.request(nobody)
        #expect(anonymous.cacheStatus == .network)
        #expect(String(decoding: anonymous.data, as: UTF8.self) == "body 3")
        // Stored without credentials: it answers requests without them, as before.
        #expect(try await setup.provider.request(nobody).cacheStatus == .hit)
        #expect(origin.served.withLock { $0 } == 3)
    }

    /// Found by review: a response stored without credentials answered a request that had some
    /// (an anonymous view of a personal page), and only `Authorization` made a request personal
    /// (a `Cookie` or an API key did not keep its answer out of the store).
    @Test func credentialsOfAnyKindKeepAnswersApart() async throws {
        let origin = Origin(headers: ["Cache-Control": "max-age=600"])
        let setup = Setup(origin.answer)
        let policy = CachePolicy.protocolRules.storingAuthorizedResponses()
        #expect(try await setup.provider.request(Item(cachePolicy: policy)).cacheStatus == .network)
        let alice = Item(headers: ["Authorization": "Bearer alice"], cachePolicy: policy)
        #expect(try await setup.provider.request(alice).cacheStatus == .network)
        #expect(try await setup.provider.request(alice).cacheStatus == .hit)
        // Not stored unless the target opts in, whatever field carries the credential.
        for field in ["Cookie", "X-API-Key", "x-auth-token"] {
            let personal = Item(path: "items/\(field)", headers: [field: "secret"])
            #expect(try await setup.provider.request(personal).cacheStatus == .network, "\(field)")
            #expect(try await setup.provider.request(personal).cacheStatus == .network, "\(field)")
        }
        // Stored when it does, for those credentials only.
        let cookie = Item(path: "items/2", headers: ["Cookie": "session=a"], cachePolicy: policy)
        #expect(try await setup.provider.request(cookie).cacheStatus == .network)
        #expect(try await setup.provider.request(cookie).cacheStatus == .hit)
        let other = Item(path: "items/2", headers: ["Cookie": "session=b"], cachePolicy: policy)
        #expect(try await setup.provider.request(other).cacheStatus == .network)
    }

    /// Found by review: another user's (or no) credentials revalidated a stored response with its
    /// dates and weak tags, and a `304` (a server that compares `Last-Modified` only) handed that
    /// user the stored body. Only a `304` naming the stored strong `ETag` may, and nothing but
    /// `If-None-Match` is sent for it.
    @Test(arguments: [false, true])
    func otherCredentialsRevalidateOnlyByAStrongETag(strong: Bool) async throws {
        let sent = Locked<[[String]]>([])
        let served = Locked(0)
        let setup = Setup(
            .handler { request in
                let url = request.url!
                let conditions = ["If-None-Match", "If-Modified-Since"].filter { name in
                    request.value(forHTTPHeaderField: name) != nil
                }
                sent.withLock { $0.append(conditions) }
                let tag = strong ? "\"v1\"" : "W/\"v1\""
                let fields = [
                    ("Cache-Control", "private, max-age=10"), ("ETag", tag),
                    ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
                ]
                if request.value(forHTTPHeaderField: "If-None-Match") != nil
                    || request.value(forHTTPHeaderField: "If-Modified-Since") != nil
                {
                    return Response(statusCode: 304, data: Data(), request: request, url: url, headerFields: fields)
                }
                let body = request.value(forHTTPHeaderField: "Authorization") ?? "anonymous"
                served.withLock { $0 += 1 }
                return Response(
                    statusCode: 200, data: Data(body.utf8), request: request, url: url, headerFields: fields)
            })
        let policy = CachePolicy.protocolRules.storingAuthorizedResponses()
        _ = try await setup.provider.request(Item(headers: ["Authorization": "alice"], cachePolicy: policy))
        let bob = try await setup.provider.request(Item(headers: ["Authorization": "bob"], cachePolicy: policy))
        if strong {
            #expect(bob.cacheStatus == CacheStatus.revalidated)
            #expect(sent.withLock { $0 } == [[], ["If-None-Match"]])
        } else {
            #expect(String(decoding: bob.data, as: UTF8.self) == "bob")
            #expect(sent.withLock { $0 } == [[], []])
        }
        let anonymous = try await setup.provider.request(Item(cachePolicy: policy))
        #expect(anonymous.cacheStatus == (strong ? CacheStatus.revalidated : CacheStatus.network))
        #expect(served.withLock { $0 } == (strong ? 1 : 3))
    }

    /// Found by review: a request with credentials, revalidating an anonymous entry by its tag
    /// and answered with the user's own page (which may not be stored), removed the anonymous
    /// entry; and a name removed from `Limits.credentialHeaders` (for redirects) made its answers
    /// storable.
    @Test func anotherUsersAnswerLeavesTheAnonymousEntry() async throws {
        let origin = Origin(headers: ["Cache-Control": "max-age=600", "ETag": "\"anonymous\""])
        let storage = MemoryCacheStorage()
        let provider = Provider<Item>(
            transport: StubTransport().on({ _ in true }, origin.answer), limits: Limits(credentialHeaders: []),
            cache: HTTPCache(storage: storage))
        #expect(try await provider.request(Item()).cacheStatus == .network)
        let personal = try await provider.request(Item(headers: ["Cookie": "session=a"]))
        #expect(personal.cacheStatus == .network)
        #expect(String(decoding: personal.data, as: UTF8.self) == "body 2")
        let anonymous = try await provider.request(Item())
        #expect(anonymous.cacheStatus == .hit)
        #expect(String(decoding: anonymous.data, as: UTF8.self) == "body 1")
        #expect(try await provider.request(Item(headers: ["Cookie": "session=a"])).cacheStatus == .network)
    }

    /// Found by review: a `304` with a weak `ETag` freshened whatever was stored, another weak tag
    /// included.
    @Test func a304NamingAnotherWeakETagDoesNotFreshenTheStoredBody() async throws {
        let full = Locked(0)
        let setup = Setup(
            .handler { request in
                let url = request.url!
                if request.value(forHTTPHeaderField: "If-None-Match") != nil {
                    return Response(
                        statusCode: 304, data: Data(), request: request, url: url,
                        headerFields: [("Cache-Control", "max-age=10"), ("ETag", "W/\"v2\"")])
                }
                let served = full.withLock {
                    $0 += 1
                    return $0
                }
                return Response(
                    statusCode: 200, data: Data("body \(served)".utf8), request: request, url: url,
                    headerFields: [("Cache-Control", "max-age=10"), ("ETag", "W/\"v\(served)\"")])
            })
        _ = try await setup.provider.request(Item())
        setup.clock.advance(by: .seconds(20))
        let second = try await setup.provider.request(Item())
        #expect(String(decoding: second.data, as: UTF8.self) == "body 2")
        #expect(full.withLock { $0 } == 2)
    }

    /// Found by review: `cacheOnly` sent what the cache cannot answer (a `POST`, a download, a
    /// stream) to the network; it never does.
    @Test func cacheOnlyNeverUsesTheNetwork() async throws {
        let setup = Setup(Origin(headers: ["Cache-Control": "max-age=60"]).answer)
        let offline = CachePolicy(.cacheOnly)
        for target in [Item(method: .post, cachePolicy: offline), Item(method: .get, cachePolicy: offline)] {
            await #expect {
                try await setup.provider.request(target)
            } throws: { error in
                guard case CourierError.underlying(let underlying, _) = error else { return false }
                return underlying is HTTPCacheMiss
            }
        }
        await #expect(throws: CourierError.self) { try await setup.provider.stream(Item(cachePolicy: offline)) }
        #expect(setup.transport.requests.isEmpty)
    }

    /// A `304` that names another strong `ETag` than the stored one is about another
    /// representation (a server that matched `If-Modified-Since` while the body changed): the
    /// stored body is not freshened under the new tag (later revalidations would keep the old
    /// body for ever); the request goes again without validators and gets the new body.
    @Test func a304NamingAnotherETagDoesNotFreshenTheStoredBody() async throws {
        let full = Locked(0)
        let setup = Setup(
            .handler { request in
                let url = request.url!
                let fields = [("Cache-Control", "max-age=10"), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]
                if request.value(forHTTPHeaderField: "If-None-Match") != nil {
                    return Response(
                        statusCode: 304, data: Data(), request: request, url: url,
                        headerFields: fields + [("ETag", "\"v2\"")])
                }
                let served =
                    full.withLock {
                        $0 += 1
                        return $0
                    } == 1 ? "one" : "two"
                let tag = served == "one" ? "\"v1\"" : "\"v2\""
                return Response(
                    statusCode: 200, data: Data(served.utf8), request: request, url: url,
                    headerFields: fields + [("ETag", tag)])
            })
        _ = try await setup.provider.request(Item())
        setup.clock.advance(by: .seconds(20))
        let second = try await setup.provider.request(Item())
        #expect(String(decoding: second.data, as: UTF8.self) == "two")
        #expect(second.cacheStatus == .network)
        #expect(second.value(forHTTPHeaderField: "ETag") == "\"v2\"")
        let stored = try #require(await setup.storage.response(forKey: "GET https://api.example.com/items/1"))
        #expect(String(decoding: stored.body, as: UTF8.self) == "two")
        #expect(setup.transport.requests.count == 3)
    }

    @Test func validationAndProcessRunOnAHit() async throws {
        let setup = Setup(.data(Data("gone".utf8), status: 404, headers: ["Cache-Control": "max-age=60"]))
        let target = Item(validation: .successCodes)
        for expected in [CacheStatus.network, .hit] {
            await #expect {
                _ = try await setup.provider.request(target)
            } throws: { error in
                (error as? CourierError)?.response?.cacheStatus == expected
                    && (error as? CourierError)?.response?.statusCode == 404
            }
        }
        #expect(setup.transport.requests.count == 1)
    }

    @Test func staleIfErrorAnswersWhenTheNetworkFails() async throws {
        let setup = Setup(
            .sequence([
                .data(Data("ok".utf8), headers: ["Cache-Control": "max-age=10, stale-if-error=300"]),
                .error(URLError(.notConnectedToInternet)), .status(503),
            ]))
        _ = try await setup.provider.request(Item())
        setup.clock.advance(by: .seconds(20))
        let offline = try await setup.provider.request(Item())
        #expect(offline.cacheStatus == .staleAfterError)
        #expect(String(decoding: offline.data, as: UTF8.self) == "ok")
        let unavailable = try await setup.provider.request(Item())
        #expect(unavailable.cacheStatus == .staleAfterError)
        #expect(unavailable.statusCode == 200)
    }

    @Test func staleWhileOfflineOnlyWhenNoResponseArrives() async throws {
        let setup = Setup(
            .sequence([
                .data(Data("ok".utf8), headers: ["Cache-Control": "max-age=10"]),
                .error(URLError(.notConnectedToInternet)), .status(503),
            ]))
        let target = Item(cachePolicy: .staleWhileOffline)
        _ = try await setup.provider.request(target)
        setup.clock.advance(by: .seconds(86_400))
        #expect(try await setup.provider.request(target).cacheStatus == .staleAfterError)
        let refused = try await setup.provider.request(target)
        #expect(refused.statusCode == 503)
        #expect(refused.cacheStatus == .network)
        // Without the policy, the error reaches the caller.
        let plain = Setup(
            .sequence([
                .data(Data("ok".utf8), headers: ["Cache-Control": "max-age=10"]),
                .error(URLError(.notConnectedToInternet)),
            ]))
        _ = try await plain.provider.request(Item())
        plain.clock.advance(by: .seconds(20))
        await #expect(throws: CourierError.self) { try await plain.provider.request(Item()) }
    }

    @Test func policies() async throws {
        let setup = Setup(Origin(headers: ["Cache-Control": "max-age=10"]).answer)
        // Cache only, nothing stored: a typed miss, nothing sent.
        await #expect {
            _ = try await setup.provider.request(Item(cachePolicy: .cacheOnly))
        } throws: { error in
            guard case .underlying(let underlying, _) = error as? CourierError else { return false }
            return underlying is HTTPCacheMiss
        }
        #expect(setup.transport.requests.isEmpty)
        _ = try await setup.provider.request(Item())
        setup.clock.advance(by: .seconds(3_600))
        #expect(try await setup.provider.request(Item(cachePolicy: .cacheFirst)).cacheStatus == .hit)
        #expect(try await setup.provider.request(Item(cachePolicy: .cacheOnly)).cacheStatus == .hit)
        #expect(setup.transport.requests.count == 1)
        // Network only sends without validators even when fresh, and stores the answer.
        let fresh = try await setup.provider.request(Item(cachePolicy: .networkOnly))
        #expect(fresh.cacheStatus == .network)
        #expect(String(decoding: fresh.data, as: UTF8.self) == "body 2")
        #expect(try await setup.provider.request(Item()).data == fresh.data)
        #expect(setup.transport.requests.count == 2)
    }

    @Test func unsafeMethodsInvalidate() async throws {
        let setup = Setup(Origin(headers: ["Cache-Control": "max-age=600"]).answer)
        _ = try await setup.provider.request(Item())
        #expect(try await setup.provider.request(Item()).cacheStatus == .hit)
        let post = try await setup.provider.request(Item(method: .post))
        #expect(post.cacheStatus == .network)
        #expect(try await setup.provider.request(Item()).cacheStatus == .network)
        #expect(setup.transport.requests.count == 3)
    }

    @Test func authorizedResponsesAreStoredOnlyWhenTheTargetOptsIn() async throws {
        let setup = Setup(Origin(headers: ["Cache-Control": "max-age=600"]).answer)
        let signed = Item(headers: ["Authorization": "Bearer secret"])
        _ = try await setup.provider.request(signed)
        #expect(try await setup.provider.request(signed).cacheStatus == .network)
        let optedIn = Item(
            headers: ["Authorization": "Bearer secret"],
            cachePolicy: CachePolicy.protocolRules.storingAuthorizedResponses())
        _ = try await setup.provider.request(optedIn)
        #expect(try await setup.provider.request(optedIn).cacheStatus == .hit)
    }

    @Test func varyKeepsVariantsApart() async throws {
        let setup = Setup(Origin(headers: ["Cache-Control": "max-age=600", "Vary": "Accept-Language"]).answer)
        let english = Item(headers: ["Accept-Language": "en"])
        _ = try await setup.provider.request(english)
        #expect(try await setup.provider.request(english).cacheStatus == .hit)
        #expect(try await setup.provider.request(Item(headers: ["Accept-Language": "fr"])).cacheStatus == .network)
    }

    @Test func downloadsAndStreamsAreNotCached() async throws {
        let setup = Setup(.data(Data("file".utf8), headers: ["Cache-Control": "max-age=600"]))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dl-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let download = Item(task: .download(.folder(folder) { _, _ in "file-\(UUID().uuidString)" }))
        for _ in 0..<2 { #expect(try await setup.provider.request(download).cacheStatus == .network) }
        for _ in 0..<2 {
            let stream = try await setup.provider.stream(Item())
            #expect(stream.head.cacheStatus == .network)
            for try await _ in stream.chunks {}
        }
        #expect(setup.transport.requests.count == 4)
        #expect(await setup.storage.count == 0)
    }

    @Test func stubbedTargetsBypassTheCache() async throws {
        let provider = Provider<Item>(
            stubClosure: Provider.immediatelyStub, transport: StubTransport(), cache: HTTPCache())
        for _ in 0..<2 { #expect(try await provider.request(Item()).cacheStatus == .network) }
    }

    @Test func theLoggerSaysWhereAResponseCameFrom() async throws {
        let lines = Locked<[String]>([])
        let logger = NetworkLoggerPlugin.logger(output: { line in lines.withLock { $0.append(line) } })
        let setup = Setup(Origin(headers: ["Cache-Control": "max-age=60"]).answer, plugins: [logger])
        _ = try await setup.provider.request(Item())
        _ = try await setup.provider.request(Item())
        let output = lines.withLock { $0 }.joined(separator: "\n")
        #expect(output.contains("[cache hit]"))
        #expect(output.components(separatedBy: "[cache hit]").count == 2)
    }

    @Test func aRevalidationIsRetriedLikeAnyRequest() async throws {
        let setup = Setup(
            .sequence([
                .data(Data("v1".utf8), headers: ["Cache-Control": "max-age=10", "ETag": "\"1\""]),
                .status(503),
                .handler { request in
                    #expect(request.value(forHTTPHeaderField: "If-None-Match") == "\"1\"")
                    return Response(
                        statusCode: 304, data: Data(), request: request, url: request.url!, headerFields: [])
                },
            ]),
            retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: .zero))
        _ = try await setup.provider.request(Item())
        setup.clock.advance(by: .seconds(20))
        let response = try await setup.provider.request(Item(validation: .successCodes))
        #expect(response.cacheStatus == .revalidated)
        #expect(response.metrics?.attempts.count == 2)
        #expect(String(decoding: response.data, as: UTF8.self) == "v1")
    }

    @Test func identicalCallersShareOneRevalidation() async throws {
        let origin = Origin(headers: ["Cache-Control": "max-age=10"], etag: "\"e\"")
        let clock = TestClock()
        let transport = StubTransport(clock: clock).on({ _ in true }, origin.answer.delayed(by: .seconds(1)))
        let provider = Provider<Item>(
            transport: transport, clock: clock, deduplication: .enabled, cache: HTTPCache(now: clock.wallClock()))
        let first = Task { try await provider.request(Item()) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(try await first.value.cacheStatus == .network)
        clock.advance(by: .seconds(20))
        let callers = (0..<64).map { _ in Task { try await provider.request(Item()) } }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        for caller in callers {
            let status = try await caller.value.cacheStatus
            #expect(status == .revalidated || status == .hit)
        }
        #expect(transport.requests.count == 2)
    }

    @Test func replayWorksWithACacheInFront() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-replay-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let fixture = folder.appendingPathComponent("cached.har")
        let network = StubTransport()
            .on({ _ in true }, .data(Data("recorded".utf8), headers: ["Cache-Control": "max-age=600"]))
        let recorder = Provider<Item>(
            transport: ReplayTransport(fixture: fixture, mode: .record, upstream: network), cache: HTTPCache())
        _ = try await recorder.request(Item())
        #expect(try await recorder.request(Item()).cacheStatus == .hit)
        #expect(network.requests.count == 1)
        let offline = StubTransport(unmatched: .throwError)
        let player = Provider<Item>(
            transport: ReplayTransport(fixture: fixture, mode: .replay, upstream: offline), cache: HTTPCache())
        let replayed = try await player.request(Item())
        #expect(replayed.cacheStatus == .network)
        #expect(String(decoding: replayed.data, as: UTF8.self) == "recorded")
        #expect(try await player.request(Item()).cacheStatus == .hit)
        #expect(offline.requests.isEmpty)
    }

    @Test func hostileCacheHeadersAreBoundedAndStoreNothingTheyShouldNot() async throws {
        let answers: [(String, StubAnswer)] = [
            ("contradictory", .data(Data("a".utf8), headers: ["Cache-Control": "max-age=60, no-store"])),
            ("vary star", .data(Data("b".utf8), headers: ["Cache-Control": "max-age=60", "Vary": "*"])),
            (
                "huge header",
                .data(
                    Data("c".utf8),
                    headers: ["Cache-Control": "max-age=60", "X-Big": String(repeating: "x", count: 100_000)])
            ),
            ("huge body", .data(Data(count: 9 << 20), headers: ["Cache-Control": "max-age=60"])),
            (
                "malformed", .data(Data("d".utf8), headers: ["Cache-Control": "max-age=, =, ,,,", "Expires": "soon"])
            ),
            (
                "many directives",
                .data(
                    Data("e".utf8),
                    headers: ["Cache-Control": Array(repeating: "x=1", count: 50_000).joined(separator: ",")])
            ),
        ]
        for (name, answer) in answers {
            let storage = MemoryCacheStorage()
            let provider = Provider<Item>(
                transport: StubTransport().on({ _ in true }, answer), cache: HTTPCache(storage: storage))
            _ = try await provider.request(Item())
            #expect(try await provider.request(Item()).cacheStatus == .network, "\(name)")
            // A malformed `max-age` is stored (within the limits) but stale at once.
            if name != "malformed" { #expect(await storage.count == 0, "\(name)") }
        }
    }

    struct Bearer: Authenticator {
        func apply(_ credential: String, to request: inout URLRequest) {
            request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        }
        func refresh(_ credential: String) async throws -> String { "fresh" }
    }

    @Test func aRevalidationRefusedWith401RefreshesTheCredential() async throws {
        let clock = TestClock()
        let transport = StubTransport()
            .on(
                { _ in true },
                .handler { request in
                    let url = request.url!
                    let authorization = request.value(forHTTPHeaderField: "Authorization")
                    if request.value(forHTTPHeaderField: "If-None-Match") == nil {
                        return Response(
                            statusCode: 200, data: Data("v1".utf8), request: request, url: url,
                            headerFields: [("Cache-Control", "private, max-age=10"), ("ETag", "\"1\"")])
                    }
                    // A 304 names the tag it confirms (RFC 9110 §15.4.5): for other credentials
                    // than the stored response's, that is what lets it freshen the entry.
                    guard authorization == "Bearer fresh" else {
                        return Response(statusCode: 401, data: Data(), request: request, url: url, headerFields: [])
                    }
                    return Response(
                        statusCode: 304, data: Data(), request: request, url: url, headerFields: [("ETag", "\"1\"")])
                })
        let provider = Provider<Item>(
            transport: transport, clock: clock, authentication: Authentication(Bearer(), credential: "old"),
            cache: HTTPCache(now: clock.wallClock()))
        let target = Item(cachePolicy: CachePolicy.protocolRules.storingAuthorizedResponses())
        #expect(try await provider.request(target).cacheStatus == .network)
        clock.advance(by: .seconds(20))
        let response = try await provider.request(target)
        #expect(response.cacheStatus == .revalidated)
        #expect(String(decoding: response.data, as: UTF8.self) == "v1")
        #expect(response.metrics?.refreshes == 1)
        #expect(
            transport.requests.map { $0.request.value(forHTTPHeaderField: "Authorization") } == [
                "Bearer old", "Bearer old", "Bearer fresh",
            ])
    }
}
