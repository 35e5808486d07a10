import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Provider {
    /// Builds the transfer for the task (file body, multipart body built off Swift's thread pool,
    /// in memory or through a temporary file, download to its temporary file), checks the
    /// destination's scheme, sends it, and removes the temporary body file whatever happens.
    /// `destinationChecked`: `request`'s destination was checked against `plan.limits` just before
    /// (see ``Transfer/checkDestination()``).
    @inline(__always)
    nonisolated(nonsending) func transfer<T: Transport>(
        _ request: URLRequest, task: HTTPTask, plan: CallPlan, subject: any TargetType, over transport: T,
        download: URL?, isSample: Bool, destinationChecked: Bool = false
    ) async throws -> CallAnswer {
        var transfer = Transfer(request: request, target: subject, limits: plan.limits)
        transfer.elapsed = elapsed
        transfer.isSample = isSample
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
            // It is checked before anything is read, and the body is written to exactly that length.
            let announced = request.value(forHTTPHeaderField: "Content-Length").flatMap { UInt64($0) }
            let total = try MultipartEncoder.totalLength(form)
            if let announced, announced != total {
                throw CourierError.multipartEncoding(MultipartFailure.sizeChanged(expected: announced, actual: total))
            }
            if total <= UInt64(max(0, form.memoryThreshold)) {
                transfer.request.httpBody = try await MultipartEncoder.encodeInMemoryOffPool(form, length: total)
            } else {
                let file = try await MultipartEncoder.encodeToFile(
                    form, length: total, in: FileManager.default.temporaryDirectory)
                temporaryBody = file
                transfer.body = .file(file)
            }
        default:
            break
        }
        // Marked after the body is in place: setting it clears the mark, and the body changes
        // neither the URL nor the limits.
        transfer.destinationChecked = destinationChecked
        // A Content-Length that is not the body's would desynchronize the connection.
        try RequestValidation.validateContentLength(
            of: transfer.request, file: transfer.body.fileURL.map { ($0, try? transfer.fileBodySize()) })
        if let download { transfer.destination = .file(download) }
        // Durable downloads (27): the transport reports the head and keeps what arrived.
        let resume = download == nil || isSample ? nil : ResumeAttempt.current
        if let resume { transfer.downloadHeadArrived = { resume.headArrived($0) } }
        // A sample answer reports no bytes: its progress is the one completed event, as in Moya.
        if let progress = plan.progress, !isSample {
            let attempt = progress.start(uploadLength: Self.uploadLength(of: transfer))
            let report: @Sendable (TransferProgress) -> Void = { progress.report($0, attempt: attempt) }
            // A resumed download's bytes on disk count as done (see ResumeAttempt).
            transfer.progress = resume?.progress { progress.report($0, kept: $1, attempt: attempt) } ?? report
        }
        // Issue 31: a stream comes back as its own answer, head and body side by side.
        guard plan.isStream else {
            // A stub answers on the pipeline's executor (resolved when `T` is specialized).
            if isSample, let sample = transport as? SampleTransport { return .whole(try await sample.answer(transfer)) }
            return .whole(try await transport.send(transfer))
        }
        return .streamed(try await transport.stream(transfer))
    }

    /// The request body's length for progress: a file body's size as every transport checks it
    /// (``Transfer/fileBodySize()``; unknown for a file the transport will refuse), or the body
    /// in the request.
    static func uploadLength(of transfer: Transfer) -> Int64? {
        switch transfer.body {
        case .file:
            return (try? transfer.fileBodySize()).map { Int64(clamping: $0) }
        case .inRequest:
            if let body = transfer.request.httpBody { return Int64(body.count) }
            return transfer.request.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) }
        }
    }

    /// Moves a successful download to its destination; removes the temporary file otherwise.
    nonisolated(nonsending) static func saveDownload(
        _ result: Result<Response, CourierError>, to destination: DownloadDestination
    ) async -> Result<Response, CourierError> {
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
                // A destination that answers with the temporary file itself (as Moya code does to
                // keep the file where it is): it stays there, and it is the caller's now.
                if placement.url == temporary.standardizedFileURL { return result }
                try await destination.move(temporary, to: placement)
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
}

/// Names for the temporary files Courier creates (and always removes).
enum TemporaryFiles {
    static func newDownloadURL() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-download-\(UUID().uuidString).part")
    }
}
