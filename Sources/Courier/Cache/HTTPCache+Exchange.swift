import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPCache {
    /// The provider's one entry into the cache: `send` through `cache` when there is one and the
    /// exchange may be cached (not a download, not a stream), else `send` alone.
    /// A download (`bypass`) is never stored or answered from the cache, but under
    /// ``CachePolicy/cacheOnly`` it is not sent either, and an unsafe one still invalidates what
    /// it changes (found by review). `credentials`: ``Limits/credentialHeaders``.
    static func exchange(
        _ cache: HTTPCache?, _ request: URLRequest, policy: CachePolicy, bypass: Bool,
        credentials: Set<String> = Limits.defaultCredentialHeaders,
        send: (URLRequest) async throws -> Response
    ) async throws -> Response {
        guard let cache else { return try await send(request) }
        guard !bypass else {
            return try await cache.passThrough(request, policy: policy, head: \.self) { try await send(request) }
        }
        return try await cache.exchange(request, policy: policy, credentials: credentials, send: send)
    }

    /// Sends a request the cache cannot answer (not a plain `GET`, a download, a stream): refused
    /// under ``CachePolicy/cacheOnly``, which never uses the network; a success of an unsafe
    /// method invalidates the stored responses it makes outdated (RFC 9111 §4.4).
    /// `head`: the response head of what `send` returns (a stream's answer is its head and body).
    func passThrough<Answer>(
        _ request: URLRequest, policy: CachePolicy, head: (Answer) -> Response,
        send: () async throws -> Answer
    ) async throws -> Answer {
        if policy.mode == .cacheOnly, let url = request.url {
            throw CourierError.underlying(HTTPCacheMiss(url: url), nil)
        }
        let answer = try await send()
        if let url = request.url {
            await invalidate(after: head(answer), method: (request.httpMethod ?? "GET").uppercased(), url: url)
        }
        return answer
    }

    /// Answers `request` from the storage, or sends it (made conditional when a stored response
    /// can be revalidated) and stores, freshens or invalidates what the answer says.
    /// - Parameter storedIgnored: Sends without looking at what is stored (once, after a `304`
    ///   that named another representation).
    func exchange(
        _ request: URLRequest, policy: CachePolicy, storedIgnored: Bool = false,
        credentials: Set<String> = Limits.defaultCredentialHeaders,
        send: (URLRequest) async throws -> Response
    ) async throws -> Response {
        let method = (request.httpMethod ?? "GET").uppercased()
        // A GET with a body (`Limits.allowsBodyInGETAndHEAD`, a search API) goes to the network
        // as it is: its key would leave the body out, and one body's answer would be served for
        // another's. Found by review.
        guard let url = request.url, let key = CacheRules.key(for: url), method == "GET",
            request.httpBody?.isEmpty ?? true, request.httpBodyStream == nil
        else {
            return try await passThrough(request, policy: policy, head: \.self) { try await send(request) }
        }
        let cap = heuristicCapSeconds
        let stored = policy.mode == .networkOnly || storedIgnored ? nil : await storage.response(forKey: key)
        let decided = now()
        let decision = CacheRules.decide(
            request, stored: stored, mode: policy.mode, now: decided, heuristicCap: cap, credentials: credentials)
        switch decision {
        case .answer(let entry, let age):
            return answer(entry, request: request, status: .hit, age: age)
        case .miss:
            throw CourierError.underlying(HTTPCacheMiss(url: url), nil)
        case .send(let outgoing, let stored):
            let requestTime = now()
            let response: Response
            do {
                response = try await send(outgoing)
            } catch {
                if let stored, !Task.isCancelled, !Self.isCancellation(error),
                    CacheRules.mayServeStale(
                        stored, request: request, mode: policy.mode, offline: true, now: now(), heuristicCap: cap,
                        credentials: credentials)
                {
                    return answer(stored, request: request, status: .staleAfterError, now: now())
                }
                throw error
            }
            let responseTime = now()
            let headers = Self.headers(of: response)
            // A response the transport reached through a redirect answers another URL: it is not
            // stored under this one, and a 304 from there says nothing about this entry.
            let answersKey = !Self.isRedirected(response, key: key)
            if response.statusCode == 304, let stored, CacheRules.isConditional(outgoing), answersKey {
                // A 304 naming another strong validator is about another representation: it must
                // not freshen this one (RFC 9111 §4.3.4). The stored one goes; the request is sent
                // again without validators.
                if !CacheRules.selects(stored, notModified: headers) {
                    await storage.removeResponse(forKey: key)
                    return try await exchange(
                        request, policy: policy, storedIgnored: true, credentials: credentials, send: send)
                }
                // Stored for other credentials: only a 304 naming its strong tag vouches for it
                // (see CacheRules.decide); otherwise the request goes again, plain, and its own
                // answer replaces the entry.
                let sameCredentials = CacheRules.matchesVary(stored, request: request, credentials: credentials)
                if !sameCredentials, !CacheRules.confirms(stored, notModified: headers) {
                    return try await exchange(
                        request, policy: policy, storedIgnored: true, credentials: credentials, send: send)
                }
                var merged = CacheRules.merging(
                    stored, notModified: headers, requestTime: requestTime, responseTime: responseTime)
                // Kept for the credentials that revalidated it.
                let digests = CacheRules.storedDigests(
                    vary: merged.header("Vary"), request: request, credentials: credentials)
                merged.varyDigests = digests ?? merged.varyDigests
                if digests == nil || CacheControl(CacheRules.header("Cache-Control", in: headers)).noStore {
                    await storage.removeResponse(forKey: key)
                } else if CacheRules.mayStore(for: request, policy: policy, credentials: credentials),
                    await storage.response(forKey: key) == stored
                {
                    // Only over the entry it freshens: one stored meanwhile (a newer answer from
                    // a request that overtook this one) is not put back to the old body (found
                    // by review). A request that may not store (its `no-store`, credentials the
                    // policy does not store) leaves the entry as it was.
                    await storage.store(merged, forKey: key)
                }
                return answer(
                    merged, request: outgoing, status: .revalidated, now: responseTime,
                    transfer: response.transferMetrics)
            }
            if response.statusCode == 304, CacheRules.isConditional(outgoing), !CacheRules.isConditional(request) {
                // A 304 to the validators the cache added, from the end of a redirect: it cannot
                // freshen the entry (another URL's), and the caller, who sent none, is owed a whole
                // answer. The request is sent again without validators. Found by review.
                return try await exchange(
                    request, policy: policy, storedIgnored: true, credentials: credentials, send: send)
            }
            if let stored, CacheRules.errorStatuses.contains(response.statusCode),
                CacheRules.mayServeStale(
                    stored, request: request, mode: policy.mode, offline: false, now: responseTime, heuristicCap: cap,
                    credentials: credentials)
            {
                return answer(
                    stored, request: request, status: .staleAfterError, now: responseTime,
                    transfer: response.transferMetrics)
            }
            if response.fileURL == nil, response.statusCode != 304, answersKey,
                CacheRules.isStorable(
                    request: outgoing, statusCode: response.statusCode, headers: headers, policy: policy,
                    credentials: credentials),
                let digests = CacheRules.storedDigests(
                    vary: CacheRules.header("Vary", in: headers), request: request, credentials: credentials)
            {
                let entry = CachedResponse(
                    url: url, statusCode: response.statusCode, headers: CacheRules.storedHeaders(headers),
                    body: response.data, requestTime: requestTime, responseTime: responseTime,
                    varyDigests: digests)
                await storage.store(entry, forKey: key)
            } else if (200..<300).contains(response.statusCode),
                policy.mode == .networkOnly
                    || stored.map({ CacheRules.matchesVary($0, request: request, credentials: credentials) }) == true
            {
                // A successful answer that may not be stored (`no-store`) makes the stored one
                // outdated. An error status leaves it for a later revalidation, and so does an
                // answer for other credentials (a user's own page does not outdate the
                // anonymous one it was revalidated against; found by review).
                await storage.removeResponse(forKey: key)
            }
            return response
        }
    }

    /// Removes what a successful unsafe request makes outdated (RFC 9111 §4.4).
    func invalidate(after response: Response, method: String, url: URL) async {
        let urls = CacheRules.invalidated(
            method: method, url: url, statusCode: response.statusCode,
            location: response.value(forHTTPHeaderField: "Location"),
            contentLocation: response.value(forHTTPHeaderField: "Content-Location"))
        for url in urls {
            if let key = CacheRules.key(for: url) { await storage.removeResponse(forKey: key) }
        }
    }

    /// A response made from a stored one, with its current `Age` (RFC 9111 §4) and its status.
    private func answer(
        _ entry: CachedResponse, request: URLRequest, status: CacheStatus, now: Date, transfer: TransferMetrics? = nil
    ) -> Response {
        answer(entry, request: request, status: status, age: CacheRules.currentAge(entry, now: now), transfer: transfer)
    }

    /// ``answer(_:request:status:now:transfer:)`` with the entry's current age already known (a
    /// hit's, fresh or, for `cacheFirst` and `cacheOnly`, stale, computed by ``CacheRules/decide(_:stored:mode:now:heuristicCap:credentials:)``).
    private func answer(
        _ entry: CachedResponse, request: URLRequest, status: CacheStatus, age: TimeInterval,
        transfer: TransferMetrics? = nil
    ) -> Response {
        // The stored fields, with the `Age` (in any case) replaced, written once into the array the
        // head keeps (issue 29: a copy of the stored dictionary with `Age` set in it, turned into
        // an array and its names joined, cost ~5,100 instructions and two mallocs a hit more).
        var fields: [(String, String)] = []
        fields.reserveCapacity(entry.headers.count + 1)
        for (name, value) in entry.headers where !ASCII.equalIgnoringCase(name, "Age") { fields.append((name, value)) }
        fields.append(("Age", String(Int(min(age, TimeInterval(CacheControl.maxDeltaSeconds))))))
        var metrics = transfer ?? TransferMetrics()
        metrics.cacheStatus = status
        return Response(
            cachedStatusCode: entry.statusCode, data: entry.body, request: request, url: entry.url,
            headerFields: fields, transferMetrics: metrics)
    }

    static func headers(of response: Response) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.response?.allHeaderFields ?? [:] {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return headers
    }

    /// Whether the transport followed a redirect to reach `response`: the hops it counted, or,
    /// when it does not count them, a response URL that is not the key's.
    static func isRedirected(_ response: Response, key: String) -> Bool {
        if let redirects = response.transferMetrics?.redirects { return redirects > 0 }
        guard let answered = response.response?.url else { return false }
        return CacheRules.key(for: answered) != key
    }

    private static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if let error = error as? CourierError { return error.isCancellation }
        return (error as? URLError)?.code == .cancelled
    }
}
