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
    ) async -> Result<Response, CourierError> {
        guard let trafficControl else {
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
        if let response = result.success {
            trafficControl.observe(response, host: host)
            if let body = response.body {
                await body.buffer.onEnd { _ in trafficControl.release(admission) }
                return result
            }
        }
        trafficControl.release(admission)
        return result
    }
}
