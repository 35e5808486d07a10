import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Recording: exchanges sent through the upstream transport, redacted, written to the fixture.
extension ReplayTransport {

    private var upstream: any Transport {
        state.withLock { state in
            if let upstream = state.upstream { return upstream }
            let made = makeUpstream()
            state.upstream = made
            return made
        }
    }

    func recordSend(_ transfer: Transfer) async throws -> Response {
        let sentBody = try await requestBody(of: transfer)
        let response = try await recordingFailure(of: transfer, sentBody) { try await $0.send(transfer) }
        let received: Data
        if let file = response.fileURL {
            received = try await readBounded(file)
        } else {
            received = response.data
        }
        try await record(transfer.request, sentBody, response: response, body: received, chunks: nil, failure: nil)
        return response
    }

    /// One recording fewer in flight; wakes ``waitForRecordings()`` when none is left.
    private func recordingEnded() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.pendingRecordings -= 1
            guard state.pendingRecordings == 0 else { return [] }
            return state.recordingWaiters.ready { true }
        }
        for waiter in waiters { waiter.resume() }
    }

    func recordStream(_ transfer: Transfer) async throws -> StreamedResponse {
        let sentBody = try await requestBody(of: transfer)
        let streamed = try await recordingFailure(of: transfer, sentBody) { try await $0.stream(transfer) }
        let (body, writer) = ResponseBody.makeStream(limits: transfer.limits)
        let head = streamed.head
        let limit = maxBodyBytes
        state.withLock { $0.pendingRecordings += 1 }
        let pump = Task {
            defer { recordingEnded() }
            var received = Data()
            var sizes: [Int] = []
            var failure: (any Error)?
            var cutShort = false
            do {
                for try await chunk in streamed.body {
                    received.append(chunk)
                    sizes.append(chunk.count)
                    if received.count > limit {
                        writer.finish(throwing: fail(.bodyTooLarge(limit: limit)))
                        return
                    }
                    guard writer.write(chunk) else {
                        cutShort = true
                        break
                    }
                }
            } catch {
                failure = error
            }
            // The reader left (which cancels this task): whatever ended the body came after it.
            if Task.isCancelled || writer.isTerminated {
                cutShort = true
                failure = nil
            }
            // What arrived is recorded even when the reader left early (marked as cut short, so
            // replay ends there too). Written from a task of its own: this one is cancelled when
            // the reader leaves, and the write must not be.
            let (request, recordedFailure, cut) = (transfer.request, failure.flatMap(Self.recordable), cutShort)
            let written = await Task {
                try await self.record(
                    request, sentBody, response: head, body: received, chunks: sizes, failure: recordedFailure,
                    cutShort: cut)
            }.result
            if case .failure(let error) = written {
                // Nobody reads the stream any more to hear why nothing was recorded: say it here.
                if cutShort, !(error is ReplayError) {
                    Issue.record(
                        Comment(rawValue: "The stream left early could not be recorded in \(fixture.path): \(error)"),
                        sourceLocation: sourceLocation)
                }
                writer.finish(throwing: error)
                return
            }
            if let failure { writer.finish(throwing: failure) } else { writer.finish() }
        }
        writer.onTermination { pump.cancel() }
        return StreamedResponse(head: head, body: body)
    }

    /// Runs `exchange` on the upstream transport; a transport failure before any response is
    /// recorded (and thrown).
    private func recordingFailure<T>(
        of transfer: Transfer, _ sentBody: Data, _ exchange: (any Transport) async throws -> T
    ) async throws -> T {
        do {
            return try await exchange(upstream)
        } catch {
            if let failure = Self.recordable(error) {
                try await record(transfer.request, sentBody, response: nil, body: Data(), chunks: nil, failure: failure)
            }
            throw error
        }
    }

    /// The request body as sent: `httpBody`, or the file's contents.
    private func requestBody(of transfer: Transfer) async throws -> Data {
        guard case .file(let url) = transfer.body else { return transfer.request.httpBody ?? Data() }
        return try await readBounded(url)
    }

    private func readBounded(_ url: URL) async throws -> Data {
        let limit = maxBodyBytes
        let size = try FileBody.regularFileSize(url)
        guard size <= UInt64(limit) else { throw fail(.bodyTooLarge(limit: limit)) }
        return try await BlockingIO.run { isCancelled in try FileBody.readAll(url, isCancelled: isCancelled) }
    }

    /// A transport failure worth replaying: a `URLError` other than a cancellation.
    private static func recordable(_ error: any Error) -> HAR.Failure? {
        let underlying = (error as? CourierError)?.underlyingError ?? error
        guard let urlError = underlying as? URLError, urlError.code != .cancelled else { return nil }
        return HAR.Failure(
            domain: NSURLErrorDomain, code: urlError.code.rawValue, description: "URLError \(urlError.code.rawValue)")
    }

    /// Adds an exchange to the fixture and writes it.
    private func record(
        _ request: URLRequest, _ sentBody: Data, response: Response?, body: Data, chunks: [Int]?, failure: HAR.Failure?,
        cutShort: Bool = false
    ) async throws {
        guard sentBody.count <= maxBodyBytes, body.count <= maxBodyBytes else {
            throw fail(.bodyTooLarge(limit: maxBodyBytes))
        }
        var entry = makeEntry(request, sentBody, response: response, body: body, chunks: chunks, failure: failure)
        if cutShort { entry.response.cutShort = true }
        _ = try await load()
        let stored = Stored(entry: entry, request: Self.request(entry, redaction))
        state.withLock { state in
            // Recorded now, so it counts as used: a replay of the same request in this run (record
            // missing) answers with it after the ones recorded before.
            state.entries = (state.entries ?? []) + [stored]
            state.uses.append(1)
        }
        // Added to what the file holds now, so other transports recording into the same fixture
        // (parallel tests, other processes) lose nothing.
        do {
            try await FixtureWriter.shared.add(entry, to: fixture, anew: mode == .record)
        } catch let error as ReplayError {
            throw fail(error)
        }
    }

    private func makeEntry(
        _ request: URLRequest, _ sentBody: Data, response: Response?, body: Data, chunks: [Int]?, failure: HAR.Failure?
    ) -> HAR.Entry {
        let (redacted, redactedBody) = redaction.request(request, body: sentBody)
        let url = redacted.url ?? URL(fileURLWithPath: "/")
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        var postData: HAR.PostData?
        if !redactedBody.isEmpty {
            let (text, encoding) = HAR.text(redactedBody)
            postData = HAR.PostData(
                mimeType: request.value(forHTTPHeaderField: "Content-Type") ?? "application/octet-stream", text: text,
                encoding: encoding)
        }
        let harRequest = HAR.Request(
            method: request.httpMethod ?? "GET", url: url.absoluteString,
            headers: redaction.headerFields(request.allHTTPHeaderFields ?? [:]),
            queryString: query.map { HAR.NameValue(name: $0.name, value: $0.value ?? "") }, postData: postData,
            bodySize: redactedBody.count)

        var fields: [String: String] = [:]
        for (name, value) in response?.response?.allHeaderFields ?? [:] {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        var (received, pieces) = redaction.body(
            body, contentType: response?.value(forHTTPHeaderField: "Content-Type"), chunks: chunks)
        if let filter = redaction.responseBody {
            let filtered = filter(received, request)
            if filtered != received { pieces = nil }
            received = filtered
        }
        if received.count != body.count, let name = fields.keys.first(where: { $0.lowercased() == "content-length" }) {
            fields[name] = "\(received.count)"
        }
        let (text, encoding) = HAR.text(received)
        let status = response?.statusCode ?? 0
        let harResponse = HAR.Response(
            status: status, statusText: status == 0 ? "" : HTTPURLResponse.localizedString(forStatusCode: status),
            headers: redaction.headerFields(fields, dropping: redaction.volatileResponseHeaders),
            content: HAR.Content(
                size: received.count, mimeType: response?.value(forHTTPHeaderField: "Content-Type") ?? "",
                text: received.isEmpty ? nil : text, encoding: encoding),
            bodySize: received.count, chunks: pieces, error: failure)
        return HAR.Entry(request: harRequest, response: harResponse)
    }
}
