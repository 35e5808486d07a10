import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Provider {
    /// One request through the whole pipeline, on the caller's task (never on the actor).
    nonisolated func perform(_ target: Target) async -> Result<Response, CourierError> {
        let pluginTarget = plugins.isEmpty ? target : target.pluginTarget

        let endpoint: Endpoint
        var request: URLRequest
        do {
            endpoint = try await endpointMapping(target)
            request = try await requestMapping(endpoint)
            for plugin in plugins {
                request = try await plugin.prepare(request, target: pluginTarget)
            }
        } catch {
            // Nothing was sent: willSend and didReceive are skipped, process still runs.
            return await process(.failure(CourierError(error)), target: pluginTarget)
        }

        for plugin in plugins {
            await plugin.willSend(request, target: pluginTarget)
        }
        let result = await send(request, endpoint: endpoint, target: target)
        for plugin in plugins {
            await plugin.didReceive(result, target: pluginTarget)
        }
        return await process(result, target: pluginTarget)
    }

    /// Sends through the stub or the transport within the deadline, then validates.
    private nonisolated func send(
        _ request: URLRequest, endpoint: Endpoint, target: Target
    ) async -> Result<Response, CourierError> {
        let behavior = stubBehavior(target)
        let deadline = target.timeout ?? timeout
        let response: Response
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
                response = try await Deadline.run(within: deadline, clock: clock, exchange)
            } else {
                response = try await exchange()
            }
        } catch {
            return .failure(CourierError(error))
        }
        guard target.validation.accepts(response.statusCode) else {
            return .failure(.statusCode(response))
        }
        return .success(response)
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
