import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Provider {
    /// One request through the whole pipeline, on the caller's task (never on the actor).
    ///
    /// Cancellation is checked before every stage, so a cancelled request stops at the next stage
    /// boundary and sends nothing once cancelled; stages that suspend (your mappings and plugins,
    /// the stub delay, the transport) end as soon as they honour cancellation. However it happens,
    /// the caller gets ``CourierError/cancelled`` and plugins see it in `didReceive` and `process`,
    /// once each.
    nonisolated func perform(
        _ target: Target, progress: ProgressReporter? = nil
    ) async -> Result<Response, CourierError> {
        guard let callTimeout = target.callTimeout ?? callTimeout else {
            return await performStages(target, progress: progress)
        }
        // The whole call: mappings, plugins, signing, every attempt and wait. The caller is
        // answered when it passes, even by a stage that never returns.
        return await Deadline.run(within: callTimeout, timer: deadlines) {
            await self.performStages(target, progress: progress)
        }
    }

    private nonisolated func performStages(
        _ target: Target, progress: ProgressReporter?
    ) async -> Result<Response, CourierError> {
        let pluginTarget = plugins.isEmpty ? target : target.pluginTarget

        let endpoint: Endpoint
        var request: URLRequest
        do {
            try Self.checkCancellation()
            endpoint = try await endpointMapping(target)
            try Self.checkCancellation()
            request = try await requestMapping(endpoint)
            for plugin in plugins {
                try Self.checkCancellation()
                request = try await plugin.prepare(request, target: pluginTarget)
            }
            try Self.checkCancellation()
        } catch {
            let failure = Self.failure(from: error)
            if failure.isCancellation {
                return await finish(.failure(failure), target: pluginTarget)
            }
            // Nothing was sent: willSend and didReceive are skipped, process still runs.
            return await process(.failure(failure), target: pluginTarget)
        }

        let policy = target.retryPolicy ?? retryPolicy
        var sends = 0
        var refreshedOnce = false
        var result: Result<Response, CourierError>
        attempts: while true {
            var outgoing = request
            var signed: SignedRequest?
            if let authentication {
                do {
                    signed = try await authentication.sign(request)
                    outgoing = signed?.request ?? request
                } catch {
                    result = .failure(Self.failure(from: error))
                    if result.failure?.isCancellation == true {
                        return await finish(result, target: pluginTarget)
                    }
                    break attempts
                }
            }
            // The request that goes on the wire, after every stage that can change it.
            do {
                try RequestValidation.validate(outgoing)
            } catch {
                return await process(.failure(error), target: pluginTarget)
            }
            sends += 1
            for plugin in plugins {
                await plugin.willSend(outgoing, target: pluginTarget)
            }
            result = await send(outgoing, endpoint: endpoint, target: target, progress: progress)
            if case .failure(.underlying) = result, Task.isCancelled {
                // A transport may report a cancelled transfer with an error of its own.
                result = .failure(.cancelled)
            }
            for plugin in plugins {
                await plugin.didReceive(result, target: pluginTarget)
            }
            if result.failure?.isCancellation == true { break attempts }

            // A refused credential: refresh it (once for all requests that found it refused) and
            // send this request once more with the new one. Not counted against the retry policy.
            if let authentication, let signed, !refreshedOnce,
                let response = result.success ?? result.failure?.response,
                authentication.requiresRefresh(response)
            {
                refreshedOnce = true
                do {
                    try await authentication.refresh(after: signed)
                    continue attempts
                } catch {
                    result = .failure(Self.failure(from: error))
                    break attempts
                }
            }

            guard case .failure(let error) = result else { break attempts }
            switch policy.decision(after: error, request: outgoing, attempt: sends - (refreshedOnce ? 1 : 0)) {
            case .doNotRetry:
                break attempts
            case .retry(let delay):
                for plugin in plugins {
                    await plugin.willRetry(outgoing, after: error, attempt: sends, delay: delay, target: pluginTarget)
                }
                do {
                    try await clock.sleep(for: delay)
                } catch {
                    // Cancelled while waiting: the request ends now.
                    return await finish(.failure(.cancelled), target: pluginTarget)
                }
            }
        }
        if sends > 1, case .failure(let error) = result, !error.isCancellation {
            result = .failure(.retryLimitReached(attempts: sends, lastError: error))
        }
        return await process(result, target: pluginTarget)
    }

    /// Sends through the stub or the transport (shared with identical requests in flight when the
    /// policy says so), validates for this caller's target, and saves a download.
    private nonisolated func send(
        _ request: URLRequest, endpoint: Endpoint, target: Target, progress: ProgressReporter?
    ) async -> Result<Response, CourierError> {
        let policy = target.deduplication ?? deduplication
        let limits = target.limits ?? limits
        let exchanged: Result<Response, CourierError>
        guard let destination = endpoint.task.downloadDestination else {
            if policy != .disabled, progress == nil,
                policy.applies(to: HTTPMethod(rawValue: request.httpMethod ?? "GET")),
                let key = InflightKey(request, task: endpoint.task)
            {
                exchanged = await shared(key) {
                    await self.exchange(
                        request, endpoint: endpoint, target: target, limits: limits, download: nil, progress: nil)
                }
            } else {
                exchanged = await exchange(
                    request, endpoint: endpoint, target: target, limits: limits, download: nil, progress: progress)
            }
            return Self.validate(exchanged, for: target)
        }
        // The temporary file is named here, so that whatever ends the exchange (a deadline that
        // passes as the body completes, a cancel, a failure) it never stays behind.
        let temporary = TemporaryFiles.newDownloadURL()
        exchanged = await exchange(
            request, endpoint: endpoint, target: target, limits: limits, download: temporary, progress: progress)
        let saved = Self.saveDownload(Self.validate(exchanged, for: target), to: destination)
        if saved.success?.fileURL != temporary {
            try? FileManager.default.removeItem(at: temporary)
        }
        return saved
    }

    private static func validate(
        _ exchanged: Result<Response, CourierError>, for target: Target
    ) -> Result<Response, CourierError> {
        exchanged.flatMap { response in
            target.validation.accepts(response.statusCode) ? .success(response) : .failure(.statusCode(response))
        }
    }

    /// The stub or the transport, within the deadline.
    private nonisolated func exchange(
        _ request: URLRequest, endpoint: Endpoint, target: Target, limits: Limits, download: URL?,
        progress: ProgressReporter?
    ) async -> Result<Response, CourierError> {
        let behavior = stubBehavior(target)
        let exchange: @Sendable () async -> Result<Response, CourierError> =
            switch behavior {
            case .never:
                { [transport] in
                    do {
                        return .success(
                            try await Self.transfer(
                                request, task: endpoint.task, target: target.pluginTarget, over: transport,
                                limits: limits, download: download, progress: progress))
                    } catch {
                        return .failure(Self.failure(from: error))
                    }
                }
            case .immediate:
                { Self.stubbed(request, endpoint: endpoint, download: download) }
            case .delayed(let delay):
                { [clock] in
                    do {
                        try await clock.sleep(for: delay)
                    } catch {
                        return .failure(.cancelled)
                    }
                    return Self.stubbed(request, endpoint: endpoint, download: download)
                }
            }
        guard let deadline = target.timeout ?? timeout else { return await exchange() }
        // A download that completes as the deadline passes is removed, not left behind.
        return await Deadline.run(
            within: deadline, timer: deadlines,
            discarded: { response in
                if let file = response.fileURL { try? FileManager.default.removeItem(at: file) }
            }, exchange)
    }

    private static func stubbed(
        _ request: URLRequest, endpoint: Endpoint, download: URL?
    ) -> Result<Response, CourierError> {
        Result { try StubResponder.response(for: request, endpoint: endpoint, download: download) }
            .mapError { failure(from: $0) }
    }

    /// Builds the transfer for the task (file body, multipart body built off Swift's thread pool,
    /// in memory or through a temporary file, download to its temporary file), checks the
    /// destination's scheme, sends it, and removes the temporary body file whatever happens.
    private static func transfer(
        _ request: URLRequest, task: HTTPTask, target: any TargetType, over transport: any Transport,
        limits: Limits, download: URL?, progress: ProgressReporter?
    ) async throws -> Response {
        try RequestValidation.validateDestination(request.url, limits: limits)
        var transfer = Transfer(request: request, target: target, limits: limits)
        var temporaryBody: URL?
        defer {
            if let temporaryBody { try? FileManager.default.removeItem(at: temporaryBody) }
        }
        switch task {
        case .uploadFile(let url, _):
            transfer.body = .file(url)
        case .uploadMultipart(let form, _) where request.httpBody == nil && request.httpBodyStream == nil:
            // The body must be as long as the Content-Length the request announced; a file part
            // that changed size since then is an error, not a truncated or overlong body.
            let announced = request.value(forHTTPHeaderField: "Content-Length").flatMap { UInt64($0) }
            let length: UInt64
            if try MultipartEncoder.totalLength(form) <= UInt64(max(0, form.memoryThreshold)) {
                let body = try await MultipartEncoder.encodeInMemoryOffPool(form)
                transfer.request.httpBody = body
                length = UInt64(body.count)
            } else {
                let file = try await MultipartEncoder.encodeToFile(form, in: FileManager.default.temporaryDirectory)
                temporaryBody = file
                transfer.body = .file(file)
                length = try FileBody.regularFileSize(file)
            }
            if let announced, announced != length {
                throw CourierError.multipartEncoding(MultipartFailure.sizeChanged(expected: announced, actual: length))
            }
        default:
            break
        }
        if let download { transfer.destination = .file(download) }
        if let progress {
            progress.start(uploadLength: uploadLength(of: transfer))
            transfer.progress = { progress.report($0) }
        }
        return try await transport.send(transfer)
    }

    private static func uploadLength(of transfer: Transfer) -> Int64? {
        switch transfer.body {
        case .file(let url):
            let size = try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber
            return size?.int64Value
        case .inRequest:
            if let body = transfer.request.httpBody { return Int64(body.count) }
            return transfer.request.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) }
        }
    }

    /// Moves a successful download to its destination; removes the temporary file otherwise.
    private static func saveDownload(
        _ result: Result<Response, CourierError>, to destination: DownloadDestination
    ) -> Result<Response, CourierError> {
        switch result {
        case .success(let response):
            guard let temporary = response.fileURL else { return result }
            do {
                let httpResponse =
                    response.response
                    ?? HTTPURLResponse(
                        url: response.request?.url ?? temporary, statusCode: response.statusCode,
                        httpVersion: "HTTP/1.1", headerFields: nil)
                guard let httpResponse else { throw CourierError.downloadDestination(URLError(.badServerResponse)) }
                let placement = try destination.resolve(temporaryURL: temporary, response: httpResponse)
                try destination.move(temporary, to: placement)
                return .success(response.moved(to: placement.url))
            } catch {
                try? FileManager.default.removeItem(at: temporary)
                return .failure(CourierError(error))
            }
        case .failure(let error):
            if let temporary = error.response?.fileURL {
                try? FileManager.default.removeItem(at: temporary)
            }
            return result
        }
    }

    /// `didReceive` then `process`.
    private nonisolated func finish(
        _ result: Result<Response, CourierError>, target: any TargetType
    ) async -> Result<Response, CourierError> {
        for plugin in plugins {
            await plugin.didReceive(result, target: target)
        }
        return await process(result, target: target)
    }

    private nonisolated func process(
        _ result: Result<Response, CourierError>, target: any TargetType
    ) async -> Result<Response, CourierError> {
        var result = result
        for plugin in plugins {
            result = await plugin.process(result, target: target)
        }
        return result
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

/// Names for the temporary files Courier creates (and always removes).
enum TemporaryFiles {
    static func newDownloadURL() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-download-\(UUID().uuidString).part")
    }
}

/// Turns a sample response into the response a stubbed request answers with.
enum StubResponder {
    /// The endpoint's sample response; for a download, its body is saved to the temporary file
    /// `download` as a real download would be.
    static func response(for request: URLRequest, endpoint: Endpoint, download: URL?) throws -> Response {
        let response = try response(for: request, sample: endpoint.sampleResponse())
        guard let file = download else { return response }
        try response.data.write(to: file)
        return Response(
            statusCode: response.statusCode, data: Data(), request: response.request, response: response.response,
            fileURL: file)
    }

    static func response(for request: URLRequest, sample: SampleResponse) throws -> Response {
        switch sample {
        case .networkResponse(let statusCode, let data):
            let httpResponse = request.url.flatMap {
                HTTPURLResponse(url: $0, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: nil)
            }
            return Response(statusCode: statusCode, data: data, request: request, response: httpResponse)
        case .response(let httpResponse, let data):
            return Response(
                statusCode: httpResponse.statusCode, data: data, request: request, response: httpResponse)
        case .networkError(let error):
            throw error
        }
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
