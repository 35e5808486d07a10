import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What makes two prepared requests the same: method, URL, headers and body bytes (for a file
/// upload, the file; for a multipart body built at send time, its parts).
struct InflightKey: Hashable, Sendable {
    enum BodySource: Hashable, Sendable {
        case file(URL)
        case multipart(MultipartFormData)
    }

    let method: String
    let url: URL?
    let headers: [String: String]
    let body: Data?
    let bodySource: BodySource?

    /// `nil` for a request whose body cannot be compared (a body stream, a multipart form with a
    /// stream part): it is never merged.
    init?(_ request: URLRequest, task: HTTPTask) {
        guard request.httpBodyStream == nil else { return nil }
        method = request.httpMethod ?? "GET"
        url = request.url
        headers = request.allHTTPHeaderFields ?? [:]
        body = request.httpBody
        switch task {
        case .uploadFile(let file, _):
            bodySource = .file(file)
        case .uploadMultipart(let form, _) where request.httpBody == nil:
            let hasStream = form.parts.contains {
                if case .stream = $0.content { return true }
                return false
            }
            guard !hasStream else { return nil }
            bodySource = .multipart(form)
        default:
            bodySource = nil
        }
    }
}

/// One shared exchange and the callers waiting for it.
struct InflightEntry {
    let id: UInt64
    var waiters: [ObjectIdentifier: CheckedContinuation<Result<Response, CourierError>, Never>]
    var task: Task<Void, Never>?
}

/// Identifies one waiting caller, so it can leave alone.
final class InflightWaiter: Sendable {
    /// Whether the caller joined an exchange already in flight rather than starting it.
    let joined = Locked(false)
}

extension Provider {
    /// Waits for the shared exchange for `key`, starting it if this caller is the first. Each caller
    /// can cancel alone: it gets ``CourierError/cancelled`` at once and the others keep waiting; the
    /// last one to leave cancels the exchange.
    nonisolated func shared(
        _ key: InflightKey, waiter: InflightWaiter,
        exchange: @escaping @Sendable () async -> Result<Response, CourierError>
    ) async -> Result<Response, CourierError> {
        await withTaskCancellationHandler {
            await join(key, waiter: waiter, exchange: exchange)
        } onCancel: {
            Task { await self.leave(key, waiter: waiter) }
        }
    }

    /// Registers the caller, in one actor step, with the entry for `key` (made here if there is none).
    private func join(
        _ key: InflightKey, waiter: InflightWaiter,
        exchange: @escaping @Sendable () async -> Result<Response, CourierError>
    ) async -> Result<Response, CourierError> {
        // This runs on the caller's task: a cancel that came before the join is seen here (the
        // flag is set before the cancellation handler runs), so the caller is never registered
        // after it left.
        if Task.isCancelled { return .failure(.cancelled) }
        return await withCheckedContinuation { continuation in
            let id = ObjectIdentifier(waiter)
            defer { signalWaiters() }
            if inflight[key] != nil {
                inflight[key]?.waiters[id] = continuation
                waiter.joined.withLock { $0 = true }
                return
            }
            let entryID = nextInflightID
            nextInflightID &+= 1
            var entry = InflightEntry(id: entryID, waiters: [id: continuation])
            entry.task = Task {
                // `exchange` is nonisolated: the work runs off the actor, which only records the end.
                let result = await exchange()
                self.complete(key, entryID: entryID, with: result)
            }
            inflight[key] = entry
        }
    }

    /// Answers every waiter and removes the entry, in one actor step.
    private func complete(_ key: InflightKey, entryID: UInt64, with result: Result<Response, CourierError>) {
        // The entry may be gone (everyone left) or replaced by a newer one with the same key.
        guard let entry = inflight[key], entry.id == entryID else { return }
        inflight[key] = nil
        for continuation in entry.waiters.values {
            continuation.resume(returning: result)
        }
    }

    /// Answers a cancelled caller at once; cancels the exchange when it was the last one waiting.
    /// Does nothing for a caller that already left or was answered.
    func leave(_ key: InflightKey, waiter: InflightWaiter) {
        let id = ObjectIdentifier(waiter)
        guard var entry = inflight[key], let continuation = entry.waiters.removeValue(forKey: id) else { return }
        continuation.resume(returning: .failure(.cancelled))
        if entry.waiters.isEmpty {
            entry.task?.cancel()
            inflight[key] = nil
        } else {
            inflight[key] = entry
        }
    }

    /// Returns once at least `count` callers wait on shared requests: a signal for tests, instead
    /// of polling ``inflightWaiterCount``.
    func waitForInflightWaiters(_ count: Int) async {
        if inflightWaiterCount >= count { return }
        await withCheckedContinuation { waiterSignals.append((count, $0)) }
    }

    private func signalWaiters() {
        guard !waiterSignals.isEmpty else { return }
        let waiting = inflightWaiterCount
        for signal in waiterSignals where signal.count <= waiting { signal.continuation.resume() }
        waiterSignals.removeAll { $0.count <= waiting }
    }
}
