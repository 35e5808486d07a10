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
    nonisolated func perform(_ target: Target) async -> Result<Response, CourierError> {
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

        for plugin in plugins {
            await plugin.willSend(request, target: pluginTarget)
        }
        var result = await send(request, endpoint: endpoint, target: target)
        if case .failure(.underlying) = result, Task.isCancelled {
            // A transport may report a cancelled transfer with an error of its own.
            result = .failure(.cancelled)
        }
        return await finish(result, target: pluginTarget)
    }

    /// Sends through the stub or the transport (shared with identical requests in flight when the
    /// policy says so), then validates for this caller's target.
    private nonisolated func send(
        _ request: URLRequest, endpoint: Endpoint, target: Target
    ) async -> Result<Response, CourierError> {
        let policy = target.deduplication ?? deduplication
        let exchanged: Result<Response, CourierError>
        if policy != .disabled, policy.applies(to: HTTPMethod(rawValue: request.httpMethod ?? "GET")),
            let key = InflightKey(request)
        {
            exchanged = await shared(key) {
                await self.exchange(request, endpoint: endpoint, target: target)
            }
        } else {
            exchanged = await exchange(request, endpoint: endpoint, target: target)
        }
        return exchanged.flatMap { response in
            target.validation.accepts(response.statusCode) ? .success(response) : .failure(.statusCode(response))
        }
    }

    /// The stub or the transport, within the deadline.
    private nonisolated func exchange(
        _ request: URLRequest, endpoint: Endpoint, target: Target
    ) async -> Result<Response, CourierError> {
        let behavior = stubBehavior(target)
        let deadline = target.timeout ?? timeout
        do {
            let exchange: @Sendable () async throws -> Response =
                switch behavior {
                case .never:
                    { [transport] in try await transport.send(request) }
                case .immediate:
                    { try StubResponder.response(for: request, sample: endpoint.sampleResponse()) }
                case .delayed(let delay):
                    { [clock] in
                        try await clock.sleep(for: delay)
                        return try StubResponder.response(for: request, sample: endpoint.sampleResponse())
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

/// Turns a sample response into the response a stubbed request answers with.
enum StubResponder {
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
