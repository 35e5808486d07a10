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
        let exchanged: Result<Response, CourierError>
        if policy != .disabled, progress == nil, endpoint.task.downloadDestination == nil,
            policy.applies(to: HTTPMethod(rawValue: request.httpMethod ?? "GET")),
            let key = InflightKey(request, task: endpoint.task)
        {
            exchanged = await shared(key) {
                await self.exchange(request, endpoint: endpoint, target: target, progress: nil)
            }
        } else {
            exchanged = await exchange(request, endpoint: endpoint, target: target, progress: progress)
        }
        let validated = exchanged.flatMap { response in
            target.validation.accepts(response.statusCode) ? .success(response) : .failure(.statusCode(response))
        }
        guard let destination = endpoint.task.downloadDestination else { return validated }
        return Self.saveDownload(validated, to: destination)
    }

    /// The stub or the transport, within the deadline.
    private nonisolated func exchange(
        _ request: URLRequest, endpoint: Endpoint, target: Target, progress: ProgressReporter?
    ) async -> Result<Response, CourierError> {
        let behavior = stubBehavior(target)
        let deadline = target.timeout ?? timeout
        do {
            let exchange: @Sendable () async throws -> Response =
                switch behavior {
                case .never:
                    { [transport] in
                        try await Self.transfer(
                            request, task: endpoint.task, target: target.pluginTarget, over: transport,
                            progress: progress)
                    }
                case .immediate:
                    { try StubResponder.response(for: request, endpoint: endpoint) }
                case .delayed(let delay):
                    { [clock] in
                        try await clock.sleep(for: delay)
                        return try StubResponder.response(for: request, endpoint: endpoint)
                    }
                }
            if let deadline {
                return .success(try await Deadline.run(within: deadline, clock: clock, exchange))
            }
            return .success(try await exchange())
        } catch {
            return .failure(Self.failure(from: error))
        }
    }

    /// Builds the transfer for the task (file body, multipart through a temporary file, download
    /// to a temporary file), sends it, and removes the temporary body file whatever happens.
    private static func transfer(
        _ request: URLRequest, task: HTTPTask, target: any TargetType, over transport: any Transport,
        progress: ProgressReporter?
    ) async throws -> Response {
        var transfer = Transfer(request: request, target: target)
        var temporaryBody: URL?
        defer {
            if let temporaryBody { try? FileManager.default.removeItem(at: temporaryBody) }
        }
        switch task {
        case .uploadFile(let url, _):
            transfer.body = .file(url)
        case .uploadMultipart(let form, _) where request.httpBody == nil && request.httpBodyStream == nil:
            let file = try await MultipartEncoder.encodeToFile(form, in: FileManager.default.temporaryDirectory)
            temporaryBody = file
            transfer.body = .file(file)
        case .download, .downloadParameters:
            transfer.destination = .file(TemporaryFiles.newDownloadURL())
        default:
            break
        }
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
                let final = try destination.resolve(temporaryURL: temporary, response: httpResponse)
                try destination.move(temporary, to: final)
                return .success(response.moved(to: final))
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
    /// The endpoint's sample response; for a download, its body is saved to a temporary file as a
    /// real download would be.
    static func response(for request: URLRequest, endpoint: Endpoint) throws -> Response {
        let response = try response(for: request, sample: endpoint.sampleResponse())
        guard endpoint.task.downloadDestination != nil else { return response }
        let file = TemporaryFiles.newDownloadURL()
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

/// Races an operation against a deadline on a clock.
enum Deadline {
    /// Runs `operation`; if `duration` passes on `clock` first, cancels it and throws
    /// ``CourierError/timedOut(_:)``.
    static func run<T: Sendable>(
        within duration: Duration, clock: any Clock<Duration>,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await clock.sleep(for: duration)
                return nil
            }
            defer { group.cancelAll() }
            // The first child to finish decides; `nil` means the clock won.
            guard let first = try await group.next(), let value = first else {
                throw CourierError.timedOut(duration)
            }
            return value
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
