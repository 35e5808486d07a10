import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The pipeline, in the order one call runs it (every stage takes the call's `CallPlan`, those that
// call the provider's closures its `Target`, and those that hand the target on, from `send` to
// `transfer`, its `subject`: the target as plugins and transports see it):
//
//   perform        the call's deadline (`callTimeout`) around everything below
//   performStages  the driver: runs what the `CallStateMachine` says (send, refresh, wait, finish)
//   prepare        target → endpoint → URLRequest → plugins' `prepare`           (once per call)
//   attempt        sign → check the final request → `willSend` → send → `didReceive` → metrics
//   send           the attempt's deadline, de-duplication, validation, the download's file
//   exchange       the stub or the transport, one path for both
//   transfer       (Provider+Transfer.swift) the `Transfer` value a transport receives
//   end            error body, `process`, metrics, `didFinish` (for a stream: when its body ends)
extension Provider {
    /// One request through the whole pipeline, on the caller's task (never on the actor).
    ///
    /// Cancellation is checked before every stage, so a cancelled request stops at the next stage
    /// boundary and sends nothing once cancelled; stages that suspend (your mappings and plugins,
    /// the stub delay, the transport) end as soon as they honour cancellation. However it happens,
    /// the caller gets ``CourierError/cancelled`` and plugins see it in `didReceive` and `process`,
    /// once each.
    @inline(__always)
    nonisolated(nonsending) func perform(_ plan: CallPlan, target: Target) async -> Result<CallAnswer, CourierError> {
        guard let callTimeout = plan.callTimeout else { return await performStages(plan, target: target) }
        // The whole call: mappings, plugins, signing, every attempt and wait. The caller is
        // answered when it passes, even by a stage that never returns.
        // A streamed head that arrives as the deadline passes: its transfer ends here.
        let expiry = DeadlineExpiry(callTimeout)
        let stages: @Sendable () async -> Result<CallAnswer, CourierError> = {
            await self.performStages(plan, target: target, expiry: expiry)
        }
        // A download the stages put in place after the caller was answered is removed: the caller
        // was told it failed (as `within` does for an attempt's deadline).
        return await Deadline.run(
            within: callTimeout, timer: deadlines, expiry: expiry,
            discarded: { answer in
                if let file = answer.head.fileURL { try? FileManager.default.removeItem(at: file) }
                answer.discard()
            }, stages)
    }

    /// The driver: runs the stages before the first send, then does what the call's
    /// ``CallStateMachine`` says (send, refresh, wait, finish) until it finishes.
    private nonisolated(nonsending) func performStages(
        _ plan: CallPlan, target: Target, expiry: DeadlineExpiry? = nil
    ) async -> Result<CallAnswer, CourierError> {
        // What is requested, as plugins and transports see it (the wrapped target of a `MultiTarget`,
        // which forwards every setting to it): boxed once per call, for the call's context and its
        // `Transfer` (issue 29: one existential box, not one for each, for a target too large to
        // be stored inline).
        var call = CallRecord(id: requestIDs.next(), target: target.pluginTarget, start: elapsed())
        call.expiry = expiry
        defer { RequestCompressor.remove(call.compressedBody) }  // compressed uploads
        let endpoint: Endpoint
        let request: URLRequest
        do {
            (endpoint, request) = try await prepare(plan, target: target, call: &call)
        } catch {
            return await end(.failure(error), plan: plan, report: error.isCancellation, call: &call)
        }
        var machine = CallStateMachine<CallAnswer>()
        var signed: SignedRequest?
        var action = machine.start()
        // Whether the last action was an attempt, so the clock reading at its end is still now.
        var attempted = false
        while true {
            let afterAttempt = attempted
            attempted = false
            switch action {
            case .send(let attempt):
                // Checked before the attempt is numbered: a call cancelled before its first send
                // (in the last plugin's `prepare`, say) sent nothing, and its hooks see attempt 0.
                guard !Task.isCancelled else {
                    action = machine.cancelled()
                    continue
                }
                call.context.attempt = attempt
                action = await self.attempt(
                    request, endpoint: endpoint, plan: plan, target: target, signed: &signed, machine: &machine,
                    call: &call)
                attempted = true
            case .refresh:
                await call.hooks(hooked.willRefreshCredential, of: self) { plugin, context in
                    await plugin.willRefreshCredential(signed?.request ?? request, context: context)
                }
                let begun = elapsed()
                var failure: CourierError?
                do throws(CourierError) {
                    if let authentication, let signed { try await authentication.refresh(after: signed) }
                } catch {
                    failure = error
                }
                call.metrics.refreshes += 1
                call.metrics.refreshTime += elapsed() - begun
                action = machine.refreshEnded(failure)
            case .wait(let delay, _, let error):
                await call.hooks(hooked.willRetry, of: self) { plugin, context in
                    await plugin.willRetry(signed?.request ?? request, after: error, delay: delay, context: context)
                }
                let begun = elapsed()
                do {
                    try await clock.sleep(for: delay.sleepable)
                    action = machine.waitEnded()
                } catch {
                    action = machine.cancelled()
                }
                call.metrics.waits.append(elapsed() - begun)
            case .finish(let result, let report):
                return await end(result, plan: plan, report: report, call: &call, justAttempted: afterAttempt)
            case .none:
                return await end(
                    .failure(.invalidUse("the call's state machine is out of step")), plan: plan, report: true,
                    call: &call)
            }
        }
    }

    /// Target → endpoint → request → plugins' `prepare`, checking for cancellation between stages.
    @inline(__always)
    private nonisolated(nonsending) func prepare(
        _ plan: CallPlan, target: Target, call: inout CallRecord
    ) async throws(CourierError) -> (Endpoint, URLRequest) {
        do {
            try Self.checkCancellation()
            // The default mappings are called directly (issue 29): the same functions, without
            // the async closure calls (≈ 1,550 instructions a request). The default endpoint
            // mapping does not suspend: a check after it would only catch a cancel that came
            // during it, which the checks before each plugin and before the send still catch
            // before anything is sent.
            var endpoint: Endpoint
            if mapsByDefault.endpoints {
                endpoint = try Endpoint(target: target)
            } else {
                endpoint = try await endpointClosure(target)
                try Self.checkCancellation()
            }
            let builtHere = mapsByDefault.requests && !Self.readsFiles(endpoint)
            var request = builtHere ? try endpoint.urlRequest() : try await requestClosure(endpoint)
            call.requestIsAsBuilt =
                builtHere && plan.headers.isEmpty && target.requestCompression == nil && hooked.prepare.isEmpty
            // Headers the call itself adds (an event source's `Last-Event-ID`), before plugins.
            for (name, value) in plan.headers { request.setValue(value, forHTTPHeaderField: name) }
            // compressed uploads: once per call, before plugins' `prepare` (a signature covers the
            // bytes sent); every attempt re-sends them.
            if let compression = target.requestCompression {
                let compressed = try await RequestCompressor.prepare(
                    request, endpoint: endpoint, compression: compression)
                (request, endpoint, call.compressedBody) = (compressed.request, compressed.endpoint, compressed.file)
            }
            call.last = elapsed()
            call.metrics.mapping = call.last - call.start
            if !hooked.prepare.isEmpty {
                // Timed as a whole, from the reading above: two readings for any number of plugins.
                let begun = call.last
                do {
                    for plugin in hooked.prepare {
                        try Self.checkCancellation()
                        request = try await plugin.prepare(consume request, context: call.context)
                    }
                } catch {
                    call.metrics.plugins += elapsed() - begun
                    throw error
                }
                call.last = elapsed()
                call.metrics.plugins += call.last - begun
            }
            // No check here: `performStages` checks before every send, the first one included.
            return (endpoint, request)
        } catch {
            throw Self.failure(from: error)
        }
    }

    /// One attempt: sign, check the final request, `willSend`, send, `didReceive`; returns what
    /// the state machine says next.
    @inline(__always)
    private nonisolated(nonsending) func attempt(
        _ request: URLRequest, endpoint: Endpoint, plan: CallPlan, target: Target, signed: inout SignedRequest?,
        machine: inout CallStateMachine<CallAnswer>, call: inout CallRecord
    ) async -> CallStateMachine<CallAnswer>.Action {
        var outgoing = request
        signed = nil
        do throws(CourierError) {
            if let authentication, let signature = try await authentication.sign(request) {
                signed = signature
                outgoing = signature.request
            }
            // The request that goes on the wire, after every stage that can change it (when one
            // did: `urlRequest()` checked the same method and headers of a request nothing changed).
            if signed != nil || !call.requestIsAsBuilt { try RequestValidation.validate(outgoing) }
        } catch {
            // The attempt's end: the call's end reads it when nothing else runs after (signing
            // can wait, for a refresh, say).
            call.last = elapsed()
            return machine.notSent(Self.failure(from: error))
        }
        let sent = outgoing
        if !hooked.willSend.isEmpty {
            await call.hooks(hooked.willSend, of: self) { plugin, context in
                await plugin.willSend(sent, context: context)
            }
        }
        // The last reading stands in when nothing ran since: `willSend`'s end, or (no `willSend`,
        // no signing, the first attempt) the end of the stages before. One clock read fewer per
        // request.
        let begun =
            !hooked.willSend.isEmpty || (authentication == nil && call.context.attempt == 1)
            ? call.last : elapsed()
        // The fields signing set are credentials wherever the request goes next (a redirect to
        // another origin dropped only the names of `Limits.credentialHeaders`: a token in a
        // header of the authenticator's own followed it; found by review).
        let sendPlan = signed.map { plan.withCredentialFields($0.credentialFields) } ?? plan
        var (result, exchanged) = await send(
            outgoing, endpoint: endpoint, plan: sendPlan, target: target, subject: call.context.target)
        if case .failure(.underlying) = result, Task.isCancelled {
            // A transport may report a cancelled transfer with an error of its own.
            result = .failure(.cancelled)
        }
        let response = result.success?.head ?? result.failure?.response
        call.last = elapsed()
        let end = call.last - call.start
        // A transport that reports nothing (a stub, a transport built on `Transfer.sendBuffered`
        // with the body in memory): the sizes read off the request and the response. What it
        // cannot know stays `nil` (unknown, never a made-up zero); a stub follows no redirects and
        // answers at its end.
        var transfer =
            response?.transferMetrics
            ?? response.map {
                TransferMetrics(
                    bytesSent: Int64(outgoing.httpBody?.count ?? 0), bytesReceived: Int64($0.data.count),
                    responseStart: exchanged.stubbed ? end + call.start : nil)
            }
        if exchanged.stubbed, transfer?.redirects == nil { transfer?.redirects = 0 }
        if transfer?.httpVersion == nil { transfer?.httpVersion = response?.httpVersion }
        call.metrics.append(
            RequestMetrics.Attempt(
                number: call.context.attempt, afterRefresh: machine.refreshed, stubbed: exchanged.stubbed,
                joinedSharedRequest: exchanged.joined, start: begun - call.start,
                responseStart: transfer?.responseStart.map { $0 - call.start }, end: end,
                statusCode: response?.statusCode, transfer: transfer))
        call.metrics.recordTraffic(exchanged.traffic)  // Traffic control (27)
        if !hooked.didReceive.isEmpty {
            // The call's deadline, not a cancel, to plugins (the state machine still sees the
            // cancel: nothing is retried after the deadline).
            let received = result.map { $0.head }.mapError { call.expiry?.reported($0) ?? $0 }
            await call.hooks(hooked.didReceive, of: self) { plugin, context in
                await plugin.didReceive(received, context: context)
            }
        }
        // A body stream set by a request mapping or a plugin (`httpBodyStream`) is read by the
        // attempt that sent it and cannot be read again: that attempt is the call's only one, no
        // retry and no re-send after a refresh (which sent the used-up stream, an empty or cut
        // body). Courier's own bodies (files, multipart, data) are built again for each attempt.
        // Found by review. Read only after an attempt another may follow (issue 29: read after
        // every attempt, the check cost about 340 instructions a stubbed request).
        // Only the origin the credential was sent to can refuse it: a 401 from where a redirect
        // led (credentials stripped) refreshed it, and a hostile redirect target could use up
        // the refresh limit or rotate tokens on every call (found by review).
        let refused =
            response.map { authentication?.requiresRefresh($0) ?? false } == true
            && Self.credentialReached(signed, response)
        var mayGoAgain = refused
        if !mayGoAgain, case .failure = result { mayGoAgain = true }
        if mayGoAgain, outgoing.httpBodyStream != nil {
            return machine.attemptEnded(
                result, credentialRefused: false, method: HTTPMethod(rawValue: outgoing.httpMethod ?? "GET"),
                policy: .disabled)
        }
        let next = machine.attemptEnded(
            result, credentialRefused: refused, method: HTTPMethod(rawValue: outgoing.httpMethod ?? "GET"),
            policy: plan.retryPolicy)
        // Issue 31: a streamed answer the machine drops (its credential refused) ends its transfer.
        if case .refresh = next { result.success?.discard() }
        return next
    }

    /// Whether the request `response` answers carried the credential `signed` put on it: the
    /// answer comes from the origin it was signed for (not another one a redirect led to), and
    /// its request (the last hop's) still has the fields signing set (a redirect away and back
    /// again strips them on the way). An answer that does not say its URL or request (a stub's)
    /// did.
    static func credentialReached(_ signed: SignedRequest?, _ response: Response?) -> Bool {
        guard let signed else { return false }
        if let url = signed.request.url, let answered = response?.response?.url, !Redirects.sameOrigin(url, answered) {
            return false
        }
        guard let answeredRequest = response?.request else { return true }
        return signed.credentialFields.allSatisfy {
            answeredRequest.value(forHTTPHeaderField: $0) == signed.request.value(forHTTPHeaderField: $0)
        }
    }

    /// `didReceive` (when it has not seen this result), `process`, the metrics, `didFinish`.
    @inline(__always)
    private nonisolated(nonsending) func end(
        _ result: Result<CallAnswer, CourierError>, plan: CallPlan, report: Bool, call: inout CallRecord,
        justAttempted: Bool = false
    ) async -> Result<CallAnswer, CourierError> {
        var result = result
        if let expiry = call.expiry, case .failure(let error) = result { result = .failure(expiry.reported(error)) }
        // A refused response's API error, decoded once for the caller (and the plugins), after
        // retries and refresh have seen the status.
        var decoded = false
        if case .failure(let error) = result, let errorBody = plan.errorBody {
            result = .failure(errorBody.applied(to: error))
            decoded = true
        }
        let processes = !hooked.process.isEmpty || (report && !hooked.didReceive.isEmpty)
        if processes {
            result = await processed(result, plan: plan, report: report, call: &call)
        }
        // Nothing ran since the last reading (an attempt's end with nothing decoded after it, or
        // the end of `didReceive` and `process`): it is the call's end.
        call.metrics.total = ((justAttempted && !decoded) || processes ? call.last : elapsed()) - call.start
        guard !hooked.didFinish.isEmpty else {
            // No `didFinish`: nothing reads the metrics after the answer, so they go into it with
            // one copy, not two (≈ 400 instructions a request, issue 29).
            switch result {
            case .success(let answer): return .success(answer.replacingHead(answer.head.with(call.metrics)))
            case .failure(let error): return .failure(error.with(call.metrics))
            }
        }
        let metrics = call.metrics
        switch result {
        case .success(let answer): result = .success(answer.replacingHead(answer.head.with(metrics)))
        case .failure(let error): result = .failure(error.with(metrics))
        }
        if case .success(.streamed(let streamed)) = result {
            // A streamed response: the call ends with its body, and `didFinish` runs then, awaited
            // by the reader that meets the end (see BodyBuffer.onEnd).
            let (plugins, context, elapsed, start) = (hooked.didFinish, call.context, elapsed, call.start)
            let head = Result<Response, CourierError>.success(streamed.head)
            await streamed.body.buffer.onEnd { error in
                var metrics = metrics
                metrics.total = elapsed() - start
                let outcome = error.map { Result<Response, CourierError>.failure($0.with(metrics)) } ?? head
                for plugin in plugins { await plugin.didFinish(outcome, metrics: metrics, context: context) }
            }
            return result
        }
        let finished = result.map { $0.head }
        for plugin in hooked.didFinish {
            await plugin.didFinish(finished, metrics: metrics, context: call.context)
        }
        return result
    }

    /// `didReceive` (when it has not seen this result) and `process`, for `end` when a plugin
    /// implements either. Kept apart so that `end` stays small enough to be inlined on the path
    /// without plugins (one async frame fewer per request).
    private nonisolated(nonsending) func processed(
        _ result: Result<CallAnswer, CourierError>, plan: CallPlan, report: Bool, call: inout CallRecord
    ) async -> Result<CallAnswer, CourierError> {
        // Plugins see heads; a stream's body goes on beside them (issue 31).
        var processed = result.map { $0.head }
        let reports = report && !hooked.didReceive.isEmpty
        if reports {
            let received = processed
            await call.hooks(hooked.didReceive, of: self) { plugin, context in
                await plugin.didReceive(received, context: context)
            }
        }
        guard !hooked.process.isEmpty else { return result }
        // Timed as a whole: `didReceive`'s end reading starts it when it just ran.
        let begun = reports ? call.last : elapsed()
        for plugin in hooked.process { processed = await plugin.process(processed, context: call.context) }
        call.last = elapsed()
        call.metrics.plugins += call.last - begun
        return CallAnswer.processed(processed, from: result, isStream: plan.isStream)
    }

    /// Sends through the stub or the transport (shared with identical requests in flight when the
    /// policy says so), within this caller's deadline, validates for this caller's target, and
    /// saves a download.
    @inline(__always)
    private nonisolated(nonsending) func send(
        _ request: URLRequest, endpoint: Endpoint, plan: CallPlan, target: Target, subject: any TargetType
    ) async -> (Result<CallAnswer, CourierError>, Exchanged) {
        let deadline = plan.attemptTimeout
        // Asked on every attempt: a stub closure may answer differently from one to the next.
        let behavior = stubClosure(target)
        var exchanged = Exchanged(stubbed: behavior != .never, joined: false)
        // An attempt whose deadline has passed already (zero or less) is not sent, on any path
        // (a shared exchange's deadline timer raced its start; found by review).
        if let deadline, deadline <= .zero { return (.failure(.timedOut(deadline)), exchanged) }
        /// The exchange, within the deadline if there is one (no closure is made when there is none).
        @inline(__always)
        func exchangeWithin(
            _ request: URLRequest = request, download: URL?, waits: inout TrafficWaits
        ) async -> Result<CallAnswer, CourierError> {
            guard let deadline else {
                return await exchange(
                    request, endpoint: endpoint, behavior: behavior, plan: plan, subject: subject, download: download,
                    waits: &waits)
            }
            let box = trafficWaitsBox()
            let result = await within(deadline) {
                var waits = TrafficWaits()
                let result = await self.exchange(
                    request, endpoint: endpoint, behavior: behavior, plan: plan, subject: subject, download: download,
                    waits: &waits)
                box?.withLock { $0.add(waits) }
                return result
            }
            if let box { waits.add(box.withLock { $0 }) }
            return result
        }
        if case .stream(let idleTimeout) = plan.mode {
            // A stream is never shared with other callers and goes to no file; the deadline covers
            // the head. A refused status is answered with the start of its body, read within the
            // same deadline and the stream's idle timeout: a server that stalls that body cannot
            // hold the call.
            let timer = deadlines
            guard let deadline else {
                let result = await exchange(
                    request, endpoint: endpoint, behavior: behavior, plan: plan, subject: subject, download: nil,
                    waits: &exchanged.traffic)
                return (
                    await Self.validateStream(
                        result, for: target, limits: plan.limits, idleTimeout: idleTimeout, timer: timer),
                    exchanged
                )
            }
            let box = trafficWaitsBox()
            let refused: @Sendable () async -> Result<CallAnswer, CourierError> = {
                var waits = TrafficWaits()
                let result = await self.exchange(
                    request, endpoint: endpoint, behavior: behavior, plan: plan, subject: subject, download: nil,
                    waits: &waits)
                box?.withLock { $0.add(waits) }
                return await Self.validateStream(
                    result, for: target, limits: plan.limits, idleTimeout: idleTimeout, timer: timer)
            }
            let result = await within(deadline, refused)
            if let box { exchanged.traffic.add(box.withLock { $0 }) }
            return (result, exchanged)
        }
        guard let destination = endpoint.task.downloadDestination else {
            let result: Result<CallAnswer, CourierError>
            if case .buffered = plan.mode, !plan.deduplication.mergesNothing,
                plan.deduplication.applies(to: HTTPMethod(rawValue: request.httpMethod ?? "GET")),
                let key = InflightKey(
                    request, task: endpoint.task, limits: plan.limits, stub: behavior, cachePolicy: subject.cachePolicy)
            {
                // Each caller waits within its own deadline: when it passes, this caller leaves
                // (as if cancelled) and the shared exchange goes on for the others. The shared
                // exchange has none of its own: it ends when the last caller leaves.
                let waiter = InflightWaiter()
                // The waits of the exchange this caller starts (a joined caller's stays empty).
                let box = trafficWaitsBox()
                // A shared exchange is never a stream: callers share the whole response.
                result = await shared(key, waiter: waiter, deadline: deadline) {
                    var waits = TrafficWaits()
                    let result = await self.exchange(
                        request, endpoint: endpoint, behavior: behavior, plan: plan, subject: subject, download: nil,
                        waits: &waits)
                    box?.withLock { $0.add(waits) }
                    return result.map { $0.head }
                }.map { .whole($0) }
                if let box { exchanged.traffic.add(box.withLock { $0 }) }
                if result.failure?.isCancellation == true {
                    // Cancelled: it has left (and cancelled the exchange if it was the last one)
                    // before it returns. (A caller whose deadline passed left on the actor already.)
                    await leave(key, waiter: waiter)
                }
                exchanged.joined = waiter.joined.withLock { $0 }
            } else {
                result = await exchangeWithin(download: nil, waits: &exchanged.traffic)
            }
            return (Self.validate(result, for: target), exchanged)
        }
        // Durable downloads (27): a target that resumes keeps its partial file between exchanges.
        let resumption = target.downloadResumption
        if resumption.isEnabled, behavior == .never {
            let result = await resumingDownload(request, resumption: resumption, limits: plan.limits) {
                await exchangeWithin($0, download: $1, waits: &exchanged.traffic).map { $0.head }
            }
            let validated = Self.validate(result.map { .whole($0) }, for: target).map { $0.head }
            return (await Self.saveDownload(validated, to: destination).map { .whole($0) }, exchanged)
        }
        // The temporary file is named here, so that whatever ends the exchange (a deadline that
        // passes as the body completes, a cancel, a failure) it never stays behind.
        let temporary = TemporaryFiles.newDownloadURL()
        let result = await exchangeWithin(download: temporary, waits: &exchanged.traffic)
        let saved = await Self.saveDownload(Self.validate(result, for: target).map { $0.head }, to: destination)
        if saved.success?.fileURL != temporary {
            try? FileManager.default.removeItem(at: temporary)
        }
        return (saved.map { .whole($0) }, exchanged)
    }

    /// How an attempt was answered, for its metrics.
    struct Exchanged {
        var stubbed: Bool
        var joined: Bool
        /// Traffic control (27): the attempt's waits for a slot and a host's pause.
        var traffic = TrafficWaits()
    }

    /// Traffic control (27): where an exchange that runs on a task of its own (a deadline's, a
    /// shared request's) leaves its waits for the attempt; `nil` without traffic control.
    private nonisolated func trafficWaitsBox() -> Locked<TrafficWaits>? {
        trafficControl == nil ? nil : Locked(TrafficWaits())
    }

    /// Runs `exchange` within `deadline`. A download that completes as the deadline passes is
    /// removed, not left behind.
    private nonisolated(nonsending) func within(
        _ deadline: Duration, _ exchange: @escaping @Sendable () async -> Result<CallAnswer, CourierError>
    ) async -> Result<CallAnswer, CourierError> {
        await Deadline.run(
            within: deadline, timer: deadlines,
            discarded: { answer in
                if let file = answer.head.fileURL { try? FileManager.default.removeItem(at: file) }
                answer.discard()
            }, exchange)
    }

    /// Validates a streamed answer. A refused status: its body is read up to
    /// ``Limits/maxErrorBodyBytes`` into the error's response, and the transfer ends.
    private static func validateStream(
        _ result: Result<CallAnswer, CourierError>, for target: Target, limits: Limits, idleTimeout: Duration?,
        timer: any DeadlineScheduling
    ) async -> Result<CallAnswer, CourierError> {
        guard case .success(let answer) = result, !target.validation.accepts(answer.head.statusCode) else {
            return result
        }
        guard case .streamed(let streamed) = answer else { return .failure(.statusCode(answer.head)) }
        let (head, body) = (streamed.head, streamed.body)
        if let idleTimeout { body.buffer.setIdleTimeout(idleTimeout, timer: timer) }
        let limit = max(0, limits.maxErrorBodyBytes)
        var data = Data()
        var iterator = body.makeAsyncIterator()
        while Int64(data.count) < limit, let chunk = try? await iterator.next() {
            data.append(chunk.prefix(Int(limit - Int64(data.count))))
        }
        body.buffer.terminate()
        // A call cancelled while its error body was read ends as cancelled, as at every other
        // stage (the read above stops at the cancellation, without saying why).
        if Task.isCancelled { return .failure(.cancelled) }
        return .failure(
            .statusCode(
                Response(
                    statusCode: head.statusCode, data: data, request: head.request, response: head.response,
                    transferMetrics: head.transferMetrics)))
    }

    private static func validate(
        _ exchanged: Result<CallAnswer, CourierError>, for target: Target
    ) -> Result<CallAnswer, CourierError> {
        exchanged.flatMap { answer in
            target.validation.accepts(answer.head.statusCode) ? .success(answer) : .failure(.statusCode(answer.head))
        }
    }

    /// The transport, or the sample transport for a stubbed target: one path for both.
    @inline(__always)
    nonisolated(nonsending) func exchangeDirect(  // Traffic control (27): Provider+Traffic's `exchange` wraps it
        _ request: URLRequest, endpoint: Endpoint, behavior: StubBehavior, plan: CallPlan, subject: any TargetType,
        download: URL?, waits: inout TrafficWaits
    ) async -> Result<CallAnswer, CourierError> {
        do {
            // Sample responses too, so a test catches what the network would refuse: the body, and
            // the destination (a plugin that rewrites a stubbed request to `gopher://` is refused
            // in the test as it would be on the wire). Transports check each hop again; the first
            // hop of the request checked here is marked checked (`Transfer.destinationChecked`).
            try RequestValidation.validateBody(of: request, task: endpoint.task, limits: plan.limits)
            try RequestValidation.validateDestination(request.url, limits: plan.limits)
            let response: CallAnswer
            switch behavior {
            case .never:
                // A stream is its own answer (issue 31) and goes past the HTTP cache, which still
                // refuses it under `cacheOnly` and forgets what an unsafe one changed (found by
                // review).
                if plan.isStream {
                    guard let cache else {
                        response = try await transfer(
                            request, task: endpoint.task, plan: plan, subject: subject, over: transport, download: nil,
                            isSample: false, destinationChecked: true)
                        break
                    }
                    response = try await cache.passThrough(request, policy: subject.cachePolicy, head: \.head) {
                        try await transfer(
                            request, task: endpoint.task, plan: plan, subject: subject, over: transport, download: nil,
                            isSample: false, destinationChecked: true)
                    }
                    break
                }
                // No HTTP cache (the default): straight to the transport, with no closure and no
                // frame of the cache's (issue 29). Traffic control, if any, admitted this exchange
                // already (`exchange`): only the cache admits what it sends itself.
                guard let cache else {
                    response = try await transfer(
                        request, task: endpoint.task, plan: plan, subject: subject, over: transport, download: download,
                        isSample: false, destinationChecked: true)
                    break
                }
                // HTTP cache (issue 26): a hit answers here; otherwise the closure is the transfer.
                let bypass = download != nil
                // Traffic control (27): behind the cache, only what it sends takes a slot.
                let admits = cacheSendsItself(behavior: behavior, plan: plan, download: download)
                let policy = subject.cachePolicy  // as the target's (a MultiTarget forwards it)
                let whole = try await HTTPCache.exchange(
                    cache, request, policy: policy, bypass: bypass, credentials: plan.limits.credentialHeaders
                ) { request in
                    guard admits else {
                        return try await transfer(
                            request, task: endpoint.task, plan: plan, subject: subject, over: transport,
                            download: download, isSample: false
                        ).head
                    }
                    // The transfer's own error goes back to the cache as it was thrown (the cache
                    // decides on it whether to serve a stale answer).
                    var thrown: (any Error)?
                    let sent = await admitted(request, subject: subject, waits: &waits) {
                        do {
                            return .success(
                                try await transfer(
                                    request, task: endpoint.task, plan: plan, subject: subject, over: transport,
                                    download: download, isSample: false))
                        } catch {
                            thrown = error
                            return .failure(Self.failure(from: error))
                        }
                    }
                    if let thrown { throw thrown }
                    // A stream never goes through the cache (issue 31: streams are their own answer).
                    return try sent.get().head
                }
                response = .whole(whole)
            case .immediate:
                response = try await transfer(
                    request, task: endpoint.task, plan: plan, subject: subject,
                    over: SampleTransport(sample: endpoint.sample, delay: nil, clock: clock),
                    download: download, isSample: true)
            case .delayed(let delay):
                response = try await transfer(
                    request, task: endpoint.task, plan: plan, subject: subject,
                    over: SampleTransport(sample: endpoint.sample, delay: delay, clock: clock),
                    download: download, isSample: true)
            }
            return .success(response)
        } catch {
            return .failure(Self.failure(from: error))
        }
    }

    private static func checkCancellation() throws(CourierError) {
        if Task.isCancelled { throw .cancelled }
    }

    /// Wraps an error; an error of unknown kind from a cancelled task counts as cancellation.
    private static func failure(from error: any Error) -> CourierError {
        let wrapped = CourierError(error)
        if case .underlying = wrapped, Task.isCancelled { return .cancelled }
        return wrapped
    }
}

extension Result {
    /// The value, if this is a success.
    var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }

    /// The error, if this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
