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
        _ request: URLRequest, endpoint: Endpoint, behavior: StubBehavior, target: Target, limits: Limits,
        download: URL?, progress: ProgressReporter?, streaming: Bool = false
    ) async -> Result<Response, CourierError> {
        guard let trafficControl else {
            return await exchangeDirect(
                request, endpoint: endpoint, behavior: behavior, target: target, limits: limits, download: download,
                progress: progress, streaming: streaming)
        }
        let host = TrafficController.hostKey(of: request.url)
        let admission: TrafficController.Admission
        do {
            admission = try await trafficControl.admit(host: host, traffic: target.traffic)
        } catch {
            return .failure(error)
        }
        TrafficWaits.current?.add(admission)
        let result = await exchangeDirect(
            request, endpoint: endpoint, behavior: behavior, target: target, limits: limits, download: download,
            progress: progress, streaming: streaming)
        if let response = result.success {
            trafficControl.observe(response, host: host)
            if let body = response.body {
                body.buffer.onEnd { _ in trafficControl.release(admission) }
                return result
            }
        }
        trafficControl.release(admission)
        return result
    }
}
