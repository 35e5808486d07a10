import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Provider {
    /// The exchange with the transport or the stub, within the provider's traffic control: it
    /// waits for its host's pause and a slot, and gives the slot back when the exchange ends —
    /// for a streamed body, when the body ends (read to the end, left early, failed or cut by a
    /// deadline). A request shared by identical callers runs this once, so joined callers take no
    /// slot. A 429 or 503 with `Retry-After` pauses its host for every caller.
    @inline(__always)
    nonisolated func exchange(
        _ request: URLRequest, endpoint: Endpoint, behavior: StubBehavior, plan: CallPlan, download: URL?
    ) async -> Result<CallAnswer, CourierError> {
        guard let trafficControl, !cacheSendsItself(behavior: behavior, plan: plan, download: download) else {
            return await exchangeDirect(request, endpoint: endpoint, behavior: behavior, plan: plan, download: download)
        }
        let host = TrafficController.hostKey(of: request.url)
        let admission: TrafficController.Admission
        do {
            admission = try await trafficControl.admit(host: host, traffic: plan.target.traffic)
        } catch {
            return .failure(error)
        }
        TrafficWaits.current?.add(admission)
        let result = await exchangeDirect(
            request, endpoint: endpoint, behavior: behavior, plan: plan, download: download)
        if let answer = result.success {
            trafficControl.observe(answer.head, host: host)
            if case .streamed(let streamed) = answer {
                await streamed.body.buffer.onEnd { _ in trafficControl.release(admission) }
                return result
            }
        }
        trafficControl.release(admission)
        return result
    }

    /// Whether the HTTP cache stands between this call and the network: then only a transfer the
    /// cache really sends takes a slot (``trafficAdmitted(_:plan:_:)``), and an answer from the
    /// cache waits for neither a slot nor a host's pause.
    nonisolated func cacheSendsItself(behavior: StubBehavior, plan: CallPlan, download: URL?) -> Bool {
        guard trafficControl != nil, cache != nil, download == nil, !plan.isStream, case .never = behavior else {
            return false
        }
        return true
    }

    /// One transfer the HTTP cache sends, within traffic control: it waits for its host's pause
    /// and a slot, and gives the slot back when the transfer ends.
    nonisolated func trafficAdmitted(
        _ request: URLRequest, plan: CallPlan, _ transfer: () async throws -> Response
    ) async throws -> Response {
        guard let trafficControl else { return try await transfer() }
        let host = TrafficController.hostKey(of: request.url)
        let admission = try await trafficControl.admit(host: host, traffic: plan.target.traffic)
        TrafficWaits.current?.add(admission)
        let response: Response
        do {
            response = try await transfer()
        } catch {
            trafficControl.release(admission)
            throw error
        }
        trafficControl.observe(response, host: host)
        // A stream never goes through the cache (issue 31: streams are their own answer).
        trafficControl.release(admission)
        return response
    }
}
