import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Durable downloads (issue 27): the download stage of a target whose
/// ``TargetType/downloadResumption`` is enabled.
///
/// Each exchange writes its body to a new temporary file (the segment), as every download does;
/// the kept partial file is touched only here, after the exchange has ended, so nothing a
/// transport does late can reach it. Then, by ``ResumeRules/decide(status:header:offer:)``:
/// a `206` for the rest is appended to the partial file, a whole `2xx` replaces it, a `416` or a
/// `206` that does not continue it drops it and the request is sent once more without `Range`, and
/// any other answer leaves it for a later attempt. A transfer that breaks off after a head with a
/// strong validator keeps what arrived (appended, or as a new partial file); a cancelled or
/// timed-out one keeps only what earlier attempts stored.
extension Provider {
    nonisolated(nonsending) func resumingDownload(
        _ request: URLRequest, resumption: DownloadResumption, limits: Limits,
        exchange: (URLRequest, URL) async -> Result<Response, CourierError>
    ) async -> Result<Response, CourierError> {
        // The ranges of a resumable download are Courier's to ask for: a caller's own would be
        // replaced as soon as bytes are kept, so it is refused rather than silently dropped.
        for name in ["Range", "If-Range"] where request.value(forHTTPHeaderField: name) != nil {
            return .failure(
                .requestMapping(
                    "a download with downloadResumption enabled sets its own \(name) header: remove the caller's, "
                        + "or set downloadResumption to .disabled to ask for a range yourself"))
        }
        let key = resumption.key(for: request)
        var entry = partialDownloads.checkOut(key)
        // The request with the fresh URL, once the target gave one in this call: a restart
        // (the offer refused) goes there too, not back to a URL that may have expired.
        var renewed: URLRequest?
        while true {
            var outgoing = renewed ?? request
            if let current = entry {
                if let freshURL = resumption.freshURL, let url = request.url {
                    do {
                        outgoing.url = try await freshURL(url)
                        // Signed for `url`: credentials never follow a fresh URL to another
                        // origin (the same rule as a redirect's).
                        outgoing = Redirects.strippingCredentials(
                            outgoing, from: url, headers: limits.credentialHeaders)
                        renewed = outgoing
                    } catch {
                        partialDownloads.checkIn(key, current)
                        return .failure(Task.isCancelled ? .cancelled : CourierError(error))
                    }
                }
                for (name, value) in ResumeRules.headers(for: current.offer) {
                    outgoing.setValue(value, forHTTPHeaderField: name)
                }
            }
            let segment = TemporaryFiles.newDownloadURL()
            let attempt = ResumeAttempt(offer: entry?.offer)
            let result = await ResumeAttempt.$current.withValue(attempt) { await exchange(outgoing, segment) }
            switch await settle(result, segment: segment, entry: entry, key: key, head: attempt.head, limits: limits) {
            case .answer(let answer):
                return answer
            case .restart:
                // Only an offer can be refused, and the next request makes none: at most twice.
                entry = nil
            }
        }
    }

    private enum Settled {
        case answer(Result<Response, CourierError>)
        case restart
    }

    /// What the exchange's answer does to the partial file, and what the caller gets.
    private nonisolated(nonsending) func settle(
        _ result: Result<Response, CourierError>, segment: URL, entry: PartialDownloads.Entry?, key: String,
        head: Response?, limits: Limits
    ) async -> Settled {
        let store = partialDownloads
        guard case .success(let response) = result else {
            await keepWhatArrived(result.failure, segment: segment, entry: entry, key: key, head: head, limits: limits)
            return .answer(result)
        }
        let decision = ResumeRules.decide(
            status: response.statusCode, header: { response.value(forHTTPHeaderField: $0) }, offer: entry?.offer)
        if case .refuse = decision {
            // Only a request without an offer is refused: there is no partial file to keep.
            if let entry { store.discard(entry) }
            unlink(segment.path)
            return .answer(
                .failure(
                    .underlying(
                        DownloadResumeFailure.unrequestedPartialContent(
                            contentRange: response.value(forHTTPHeaderField: "Content-Range")), response)))
        }
        switch (decision, entry) {
        case (.append, let entry?):
            return .answer(await complete(entry, key: key, with: response, segment: segment, limits: limits))
        case (.restart, let entry?):
            store.discard(entry)
            unlink(segment.path)
            return .restart
        case (.keep, let entry?):
            store.checkIn(key, entry)
        case (_, let entry?):
            store.discard(entry)
        case (_, nil):
            break
        }
        return .answer(result)
    }

    /// A `206` for the rest: appended to the partial file, which becomes the download.
    private nonisolated(nonsending) func complete(
        _ entry: PartialDownloads.Entry, key: String, with response: Response, segment: URL, limits: Limits
    ) async -> Result<Response, CourierError> {
        let store = partialDownloads
        defer { unlink(segment.path) }
        let length: Int64
        do {
            length = try await BlockingIO.run { _ in
                try PartialDownloads.append(segment, to: entry, limit: limits.maxDownloadBytes)
            }
        } catch {
            store.discard(entry)
            return .failure(Task.isCancelled ? .cancelled : CourierError(error))
        }
        // `decide` read this range before answering `.append`.
        let range = response.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init)
        // A range with an unknown total (`bytes 3-5/*`) ends where the entity does only when no
        // earlier answer said the entity is longer: a short one was taken for the whole file.
        // Found by review.
        let expected = range.map { $0.total ?? entry.offer.total ?? ($0.last + 1) } ?? -1
        guard let range, length == range.last + 1, length <= expected else {
            store.discard(entry)
            return .failure(
                .underlying(
                    DownloadResumeFailure.rangeMismatch(expectedLength: expected, actualLength: length), response))
        }
        guard length == expected else {
            // A whole 206 for less than the rest (RFC 9110 lets a server send less): its bytes
            // continue the file, so they are kept for the next attempt rather than thrown away.
            var kept = entry
            kept.offer.length = length
            store.checkIn(key, kept)
            return .failure(
                .underlying(
                    DownloadResumeFailure.rangeMismatch(expectedLength: expected, actualLength: length), response))
        }
        // Out of the store's folder, so the file is the caller's like any download's temporary file.
        let file = TemporaryFiles.newDownloadURL()
        guard rename(entry.file.path, file.path) == 0 else {
            store.discard(entry)
            return .failure(
                .downloadDestination(CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])))
        }
        store.release(entry)
        return .success(response.withBody(Data(), fileURL: file))
    }

    /// A failed exchange: what arrived after a head that allows resuming is kept.
    private nonisolated(nonsending) func keepWhatArrived(
        _ error: CourierError?, segment: URL, entry: PartialDownloads.Entry?, key: String, head: Response?,
        limits: Limits
    ) async {
        let store = partialDownloads
        defer { unlink(segment.path) }
        // Only a transfer that broke off: a cancelled or timed-out exchange may still be writing.
        guard case .underlying(let underlying, _)? = error, !(underlying is DownloadResumeFailure),
            !Task.isCancelled, let head
        else {
            if let entry { store.checkIn(key, entry) }
            return
        }
        let header: (String) -> String? = { head.value(forHTTPHeaderField: $0) }
        switch (ResumeRules.decide(status: head.statusCode, header: header, offer: entry?.offer), entry) {
        case (.append, var entry?):
            do {
                entry.offer.length = try await BlockingIO.run { [entry] _ in
                    try PartialDownloads.append(segment, to: entry, limit: limits.maxDownloadBytes)
                }
                store.checkIn(key, entry)
            } catch {
                store.discard(entry)
            }
        case (.replace, let old):
            if let old { store.discard(old) }
            var info = stat()
            guard let validator = ResumeRules.validator(header), stat(segment.path, &info) == 0, info.st_size > 0,
                let adopted = store.adopt(
                    segment,
                    offer: ResumeRules.Offer(
                        length: Int64(info.st_size), validator: validator, total: ResumeRules.total(ofWhole: header)))
            else { return }
            store.checkIn(key, adopted)
        case (.keep, let entry?):
            store.checkIn(key, entry)
        case (_, let entry?):
            store.discard(entry)
        case (_, nil):
            break
        }
    }
}
