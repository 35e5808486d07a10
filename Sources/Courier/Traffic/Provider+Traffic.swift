import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Provider {
    /// The exchange with the transport or the stub, within the provider's traffic control (see
    /// ``admitted(_:subject:waits:_:)``). A request shared by identical callers runs this once, so
    /// joined callers take no slot. Behind the HTTP cache, the cache admits what it sends itself.
    @inline(__always)
    nonisolated(nonsending) func exchange(
        _ request: URLRequest, endpoint: Endpoint, behavior: StubBehavior, plan: CallPlan, subject: any TargetType,
        download: URL?, waits: inout TrafficWaits
    ) async -> Result<CallAnswer, CourierError> {
        guard trafficControl != nil, !cacheSendsItself(behavior: behavior, plan: plan, download: download) else {
            return await exchangeDirect(
                request, endpoint: endpoint, behavior: behavior, plan: plan, subject: subject, download: download,
                waits: &waits)
        }
        // Stays zero: without the cache in the way, `exchangeDirect` admits nothing itself.
        var inner = TrafficWaits()
        return await admitted(request, subject: subject, waits: &waits) {
            await exchangeDirect(
                request, endpoint: endpoint, behavior: behavior, plan: plan, subject: subject, download: download,
                waits: &inner)
        }
    }

    /// Whether the HTTP cache stands between this call and the network: then only a transfer the
    /// cache really sends takes a slot (``admitted(_:subject:waits:_:)`` around it), and an answer
    /// from the cache waits for neither a slot nor a host's pause.
    nonisolated func cacheSendsItself(behavior: StubBehavior, plan: CallPlan, download: URL?) -> Bool {
        guard trafficControl != nil, cache != nil, download == nil, !plan.isStream, case .never = behavior else {
            return false
        }
        return true
    }

    /// Traffic control's one admission path, for the pipeline's exchange and for each transfer
    /// the HTTP cache sends: waits for the host's pause and a slot (adding how long to `waits`),
    /// runs `exchange`, and gives the slot back when the exchange ends — for a streamed body, when
    /// the body ends (read to the end, left early, failed or cut by a deadline). A 429 or 503 with
    /// `Retry-After` pauses its host for every caller.
    ///
    /// When no limit is reached it takes one lock to get the slot and one to give it back, reads
    /// no clock, and does not suspend before `exchange`.
    @inline(__always)
    nonisolated(nonsending) func admitted(
        _ request: URLRequest, subject: any TargetType, waits: inout TrafficWaits,
        _ exchange: () async -> Result<CallAnswer, CourierError>
    ) async -> Result<CallAnswer, CourierError> {
        guard let trafficControl else { return await exchange() }
        let host = trafficControl.needsHost ? TrafficController.hostKey(of: request.url) : ""
        let traffic = subject.traffic  // as the target's (a MultiTarget forwards it)
        let admission: TrafficController.Admission
        if let now = trafficControl.admitAtOnce(host: host, traffic: traffic) {
            admission = now
        } else {
            do {
                admission = try await trafficControl.admitWaiting(host: host, traffic: traffic)
            } catch {
                return .failure(error)
            }
            waits.add(admission)
        }
        let result = await exchange()
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
}
