import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The transport a stubbed request goes through: it answers with the endpoint's sample response
/// (after `delay` on the provider's clock), and the same transfer path as the network's does the
/// rest (file bodies, multipart bodies, downloads, progress, limits).
struct SampleTransport: Transport {
    let sample: Endpoint.Sample
    let delay: Duration?
    let clock: any Clock<Duration>

    func send(_ transfer: Transfer) async throws -> Response { try await answer(transfer) }

    /// The shared buffered path; a body already in the request is answered without suspending
    /// (a stubbed request is the pipeline's own cost, so it takes no extra hops). The provider
    /// calls this rather than ``send(_:)``: it runs on the pipeline's executor, with no executor
    /// check on the way in or out (issue 29).
    nonisolated(nonsending) func answer(_ transfer: Transfer) async throws -> Response {
        if let delay {
            do { try await clock.sleep(for: delay.sleepable) } catch { throw CourierError.cancelled }
        }
        let sample = sample.response()
        guard case .inRequest = transfer.body else {
            return try await transfer.sendBuffered { try SampleTransport.response(for: $0, sample: sample) }
        }
        let request = transfer.request
        let response = try SampleTransport.response(for: request, sample: sample)
        return try await transfer.completeBuffered(response, sent: Int64(request.httpBody?.count ?? 0))
    }

    static func response(for request: URLRequest, sample: SampleResponse) throws -> Response {
        switch sample {
        case .networkResponse(let statusCode, let data):
            // The `HTTPURLResponse` is built only if someone reads it (issue 29).
            return Response(sampleStatusCode: statusCode, data: data, request: request)
        case .response(let httpResponse, let data):
            return Response(
                statusCode: httpResponse.statusCode, data: data, request: request, response: httpResponse)
        case .networkError(let error):
            throw error
        case .stream(let statusCode, let headers, let chunks, _):
            let httpResponse = request.url.flatMap {
                HTTPURLResponse(url: $0, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: headers)
            }
            return Response(
                statusCode: statusCode, data: chunks.reduce(into: Data()) { $0.append($1) }, request: request,
                response: httpResponse)
        }
    }

    /// A streamed sample hands its head over at once and its chunks on the clock; any other
    /// sample is answered whole (the default path). The sample is read once, after the delay, as
    /// in ``send(_:)``.
    func stream(_ transfer: Transfer) async throws -> StreamedResponse {
        if let delay {
            do { try await clock.sleep(for: delay.sleepable) } catch { throw CourierError.cancelled }
        }
        let sample = sample.response()
        guard case .stream(let statusCode, let headers, let chunks, let interval) = sample else {
            // Answered with the sample just read: reading it again gave a sample that changes
            // between reads (a scripted sequence) its next answer, and took two for one attempt.
            // A stream has no total limit, only its backlog, as on the network: the whole body
            // is handed over whatever `maxResponseBytes` says (the buffered path applied it).
            let request = try await transfer.bufferedRequest()
            return StreamedResponse(buffered: try SampleTransport.response(for: request, sample: sample))
        }
        let request = transfer.request
        let httpResponse = request.url.flatMap {
            HTTPURLResponse(url: $0, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: headers)
        }
        let head = Response(statusCode: statusCode, data: Data(), request: request, response: httpResponse)
        return ChunkedAnswer.stream(
            head: head, chunks: chunks, interval: interval, clock: clock, limits: transfer.limits)
    }
}

/// A scripted streamed answer, for stubs: the head at once, then each chunk `interval` apart on
/// `clock`, then the end. The writing task ends (and stops waiting) when the reader goes.
package enum ChunkedAnswer {
    /// How a scripted body ends after its last chunk.
    package enum Ending: Sendable {
        /// The body is complete.
        case finish
        /// The transfer fails with this error (a dropped connection, say).
        case fail(any Error)
        /// Nothing more arrives until the reader goes (or `duration` passes on the clock, after
        /// which the transfer fails with `URLError(.timedOut)`).
        case stall(Duration)
    }

    package static func stream(
        head: Response, chunks: [Data], interval: Duration, clock: any Clock<Duration>, limits: Limits,
        ending: Ending = .finish
    ) -> StreamedResponse {
        let (body, writer) = ResponseBody.makeStream(limits: limits)
        let task = Task {
            for chunk in chunks {
                if interval > .zero {
                    do { try await clock.sleep(for: interval.sleepable) } catch { return }
                }
                guard writer.write(chunk) else { return }
            }
            switch ending {
            case .finish:
                writer.finish()
            case .fail(let error):
                writer.finish(throwing: error)
            case .stall(let duration):
                do { try await clock.sleep(for: duration.sleepable) } catch { return }
                writer.finish(throwing: URLError(.timedOut))
            }
        }
        writer.onTermination { task.cancel() }
        return StreamedResponse(head: head, body: body)
    }
}
