import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Runs a provider's ``TrafficQueue``: callers wait here for a slot and for a host's pause, and
/// give their slot back when their exchange (and a streamed body) ends.
///
/// The queue sits behind a lock rather than in the provider actor for two reasons: a waiter that
/// is cancelled must leave the queue from its task's cancellation handler, which is synchronous;
/// and a streamed body gives its slot back from the body's end handler, also synchronous. A call
/// that finds a free slot takes the lock once to get it and once to give it back (no suspension).
final class TrafficController: Sendable {
    /// A slot held by one exchange (or no slot, for an exempt request).
    struct Admission: Sendable {
        var host: String
        var weight: Int
        var queueWait: Duration = .zero
        var pauseWait: Duration = .zero
    }

    /// A test's condition on the queue (see ``waitFor(_:)``).
    typealias Condition = @Sendable (_ waiting: Int, _ inFlight: Int) -> Bool

    private struct State: Sendable {
        var queue: TrafficQueue
        var waiting: [UInt64: CheckedContinuation<SlotOutcome, Never>] = [:]
        var nextID: UInt64 = 0
        /// Tests waiting for a state of the queue (``waitFor(_:)``).
        var signals = ConditionWaiters<Condition>()

        /// The signals whose condition now holds, removed.
        mutating func ready() -> [CheckedContinuation<Void, Never>] {
            let (waiting, inFlight) = (queue.waitingCount, queue.inFlight)
            return signals.ready { $0(waiting, inFlight) }
        }
    }

    let policy: TrafficPolicy
    private let clock: any Clock<Duration>
    private let elapsed: @Sendable () -> Duration
    private let state: Locked<State>

    init(policy: TrafficPolicy, clock: any Clock<Duration>, elapsed: @escaping @Sendable () -> Duration) {
        self.policy = policy
        self.clock = clock
        self.elapsed = elapsed
        self.state = Locked(State(queue: TrafficQueue(policy: policy)))
    }

    /// How many calls wait for a slot.
    var waitingCount: Int { state.withLock { $0.queue.waitingCount } }
    /// Slots in flight, in weight.
    var inFlight: Int { state.withLock { $0.queue.inFlight } }

    /// Returns once `condition(waiting, inFlight)` holds: how many calls wait for a slot, and the
    /// slots in flight (in weight), or at once when the calling task is cancelled. For tests, which
    /// wait for a known state instead of sleeping.
    func waitFor(_ condition: @escaping Condition) async {
        await state.wait(in: \.signals, for: condition) { state, condition in
            condition(state.queue.waitingCount, state.queue.inFlight)
        }
    }

    /// How many ``waitFor(_:)`` calls are waiting.
    var signalCount: Int { state.withLock { $0.signals.count } }

    /// `scheme://host:port` of a request, lowercased, the port filled in from the scheme (443 for
    /// `https` and `wss`, 80 otherwise); user info is not part of it, an IP literal is written
    /// without its brackets (as `URL.host` gives it).
    ///
    /// Issue 27: read off the URL's text, which Foundation parsed already, in one pass: through
    /// `URL.scheme`, `URL.host` and `URL.port` it cost about 4,000 instructions and two strings a
    /// request on Linux. A URL the reader does not expect (no `//`, a percent-encoded or
    /// non-ASCII host, a long port) takes Foundation's accessors; `TrafficQueueTests` holds both
    /// to the same answer.
    static func hostKey(of url: URL?) -> String {
        guard let url else { return "" }
        return textHostKey(of: url) ?? foundationHostKey(of: url)
    }

    /// The host key read off the URL's text, or `nil` when it is not the usual
    /// `scheme://[userinfo@]host[:port]` with a plain host (letters, digits, `-._~`, or an IPv6
    /// literal without a zone) and a port of at most five digits.
    static func textHostKey(of url: URL) -> String? {
        var text = url.absoluteString
        return text.withUTF8 { hostKey(bytes: $0) }
    }

    /// The host key through Foundation's accessors: the reference answer.
    static func foundationHostKey(of url: URL) -> String {
        guard let scheme = url.scheme?.lowercased() else { return "" }
        let host = url.host?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" || scheme == "wss" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }

    /// ``textHostKey(of:)`` on the text's bytes.
    private static func hostKey(bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let colon = URLBuilder.schemeEnd(bytes) else { return nil }
        let slash = UInt8(ascii: "/")
        var start = colon + 1
        guard start + 1 < bytes.count, bytes[start] == slash, bytes[start + 1] == slash else { return nil }
        start += 2
        var end = start
        while end < bytes.count, bytes[end] != slash, bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") {
            end += 1
        }
        // User info ends at the authority's last `@`.
        var hostStart = start
        for index in start..<end where bytes[index] == UInt8(ascii: "@") { hostStart = index + 1 }
        var hostEnd = hostStart
        var portStart: Int
        if hostStart < end, bytes[hostStart] == UInt8(ascii: "[") {
            // An IP literal: the host is what is inside the brackets.
            hostStart += 1
            hostEnd = hostStart
            while hostEnd < end, bytes[hostEnd] != UInt8(ascii: "]") {
                guard isHexOrColonOrDot(bytes[hostEnd]) else { return nil }
                hostEnd += 1
            }
            guard hostEnd < end else { return nil }
            portStart = hostEnd + 1
            guard portStart == end || bytes[portStart] == UInt8(ascii: ":") else { return nil }
        } else {
            while hostEnd < end, bytes[hostEnd] != UInt8(ascii: ":") {
                guard isPlainHostByte(bytes[hostEnd]) else { return nil }
                hostEnd += 1
            }
            portStart = hostEnd
        }
        // The port: digits after `:`; none (or an empty port) means the scheme's default.
        var port = -1
        if portStart < end {
            portStart += 1
            guard end - portStart <= 5 else { return nil }
            if portStart < end { port = 0 }
            for index in portStart..<end {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit <= 9 else { return nil }
                port = port * 10 + Int(digit)
            }
        }
        if port < 0 {
            let scheme = UnsafeBufferPointer(rebasing: bytes[..<colon])
            let https = colon == 5 && ASCII.hasPrefix(scheme, lowercase: "https")
            let wss = colon == 3 && ASCII.hasPrefix(scheme, lowercase: "wss")
            port = https || wss ? 443 : 80
        }
        var digits = 1
        var rest = port / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        let hostLength = hostEnd - hostStart
        let length = colon + 3 + hostLength + 1 + digits
        return String(unsafeUninitializedCapacity: length) { out in
            for index in 0..<colon { out[index] = ASCII.lowercased(bytes[index]) }
            out[colon] = UInt8(ascii: ":")
            out[colon + 1] = slash
            out[colon + 2] = slash
            for index in 0..<hostLength { out[colon + 3 + index] = ASCII.lowercased(bytes[hostStart + index]) }
            out[colon + 3 + hostLength] = UInt8(ascii: ":")
            var value = port
            for index in stride(from: length - 1, through: length - digits, by: -1) {
                out[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            return length
        }
    }

    /// Letters, digits, `-`, `.`, `_`, `~`: a host that `URL.host` gives back as written.
    private static func isPlainHostByte(_ byte: UInt8) -> Bool {
        ASCII.isLetter(byte) || ASCII.isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~")
    }

    /// Hex digits, `:` and `.`: an IPv6 literal without a zone.
    private static func isHexOrColonOrDot(_ byte: UInt8) -> Bool {
        let lower = ASCII.lowercased(byte)
        let hex = lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "f")
        return hex || ASCII.isDigit(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
    }

    /// Whether admissions need the request's host key: for a per-host limit or a shared pause.
    /// Without either, every request counts under one key.
    var needsHost: Bool {
        policy.maxRequestsPerHost != nil || policy.maxPause.map { $0 > .zero } == true
    }

    /// Waits until `host` is not paused and a slot is free, then takes the slot.
    /// - Throws: ``CourierError/cancelled`` when the task is cancelled while it waits (it holds
    ///   nothing then), ``CourierError/limitExceeded(_:)`` when the queue is full.
    func admit(host: String, traffic: TrafficClass) async throws(CourierError) -> Admission {
        if let admission = admitAtOnce(host: host, traffic: traffic) { return admission }
        return try await admitWaiting(host: host, traffic: traffic)
    }

    /// The fast path of ``admit(host:traffic:)``, without suspending: the slot when `host` is not
    /// paused, nobody waits and the limits allow it (one lock, no clock read unless a host is
    /// paused); otherwise `nil`, and ``admitWaiting(host:traffic:)`` waits.
    func admitAtOnce(host: String, traffic: TrafficClass) -> Admission? {
        let weight = state.withLock { $0.queue.takeAtOnce(host: host, weight: traffic.weight, now: elapsed()) }
        return weight.map { Admission(host: host, weight: $0) }
    }

    /// The slow path of ``admit(host:traffic:)``: a pause to wait for, or a queue.
    func admitWaiting(host: String, traffic: TrafficClass) async throws(CourierError) -> Admission {
        var admission = Admission(host: host, weight: 0)
        while true {
            let now = elapsed()
            if let until = state.withLock({ $0.queue.pausedUntil(host, now: now) }) {
                do {
                    try await clock.sleep(for: (until - now).sleepable)
                } catch {
                    throw .cancelled
                }
                admission.pauseWait += elapsed() - now
                continue
            }
            if Task.isCancelled { throw .cancelled }
            admission.weight = state.withLock { $0.queue.effectiveWeight(traffic.weight) }
            if admission.weight > 0 {
                let granted = try await slot(host: host, weight: admission.weight, priority: traffic.priority)
                admission.queueWait += granted
            }
            // A pause that began while it waited: the slot goes back, and it waits for the pause.
            let after = elapsed()
            if state.withLock({ $0.queue.pausedUntil(host, now: after) }) != nil {
                release(admission)
                continue
            }
            return admission
        }
    }

    /// Gives the slot back; the next waiters in order get theirs.
    func release(_ admission: Admission) {
        guard admission.weight > 0 else { return }
        // The clock is read only when some call waits (for its priority's aging).
        let (granted, ready) = state.withLock { state in
            let ended = state.queue.end(host: admission.host, weight: admission.weight, now: elapsed())
            let granted = ended.isEmpty ? [] : Self.claim(ended, from: &state)
            return (granted, state.ready())
        }
        for continuation in granted { continuation.resume(returning: .granted) }
        for signal in ready { signal.resume() }
    }

    /// A response that asks the client to wait (429 or 503 with `Retry-After`) pauses its host for
    /// every caller, up to ``TrafficPolicy/maxPause``.
    func observe(_ response: Response, host: String) {
        guard response.statusCode == 429 || response.statusCode == 503, let maxPause = policy.maxPause,
            maxPause > .zero, let header = response.value(forHTTPHeaderField: "Retry-After"),
            let wait = RetryPolicy.retryAfter(header, now: Date()), wait > .zero
        else { return }
        // The host that answered: after a redirect, the one it led to, not the one asked (a
        // redirect target's 503 paused the API's host for every caller; found by review).
        let answered = host.isEmpty ? host : (response.response?.url).map { Self.hostKey(of: $0) } ?? host
        let now = elapsed()
        let until = now + min(wait, maxPause)
        state.withLock { $0.queue.pause(answered, until: until, now: now) }
    }

    /// How a wait for a slot ended.
    enum SlotOutcome: Sendable {
        /// Granted without waiting.
        case immediate
        /// Granted after waiting.
        case granted
        /// Left the queue, cancelled.
        case cancelled
        /// The queue was full.
        case full
    }

    /// What a step on the queue answers: the caller's own outcome (if known now), the granted
    /// waiters to resume, the test signals to resume.
    private typealias Arrived = (
        SlotOutcome?, [CheckedContinuation<SlotOutcome, Never>], [CheckedContinuation<Void, Never>]
    )

    /// What a waiter that leaves the queue answers: itself, the waiters granted now, the signals.
    private struct Left {
        var mine: CheckedContinuation<SlotOutcome, Never>
        var granted: [CheckedContinuation<SlotOutcome, Never>]
        var ready: [CheckedContinuation<Void, Never>]
    }

    /// Waits for a slot; returns how long it waited.
    private func slot(
        host: String, weight: Int, priority: TrafficClass.Priority
    ) async throws(CourierError)
        -> Duration
    {
        let begun = elapsed()
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let waiter = TrafficQueue.Waiter(id: id, host: host, weight: weight, priority: priority, enqueued: begun)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SlotOutcome, Never>) in
                let (answer, others, ready) = state.withLock { state -> Arrived in
                    // Checked under the lock: a cancellation handler that ran before found nothing.
                    if Task.isCancelled { return (SlotOutcome.cancelled, [], []) }
                    switch state.queue.arrive(waiter, now: begun) {
                    case .granted:
                        return (.immediate, [], state.ready())
                    case .full(let granted):
                        return (.full, Self.claim(granted, from: &state), state.ready())
                    case .queued(let granted):
                        state.waiting[id] = continuation
                        return (nil, Self.claim(granted, from: &state), state.ready())
                    }
                }
                if let answer { continuation.resume(returning: answer) }
                for other in others { other.resume(returning: .granted) }
                for signal in ready { signal.resume() }
            }
        } onCancel: {
            let now = elapsed()
            let left = state.withLock { state -> Left? in
                guard let mine = state.waiting.removeValue(forKey: id) else { return nil }
                let (_, granted) = state.queue.leave(id, now: now)
                return Left(mine: mine, granted: Self.claim(granted, from: &state), ready: state.ready())
            }
            guard let left else { return }
            left.mine.resume(returning: .cancelled)
            for continuation in left.granted { continuation.resume(returning: .granted) }
            for signal in left.ready { signal.resume() }
        }
        switch outcome {
        case .full:
            throw .limitExceeded(.trafficQueue(limit: policy.maxQueuedRequests))
        case .cancelled:
            throw .cancelled
        case .immediate, .granted:
            if Task.isCancelled {
                // Granted as it was cancelled: the slot passes on unused.
                release(Admission(host: host, weight: weight))
                throw .cancelled
            }
            return outcome == .immediate ? .zero : elapsed() - begun
        }
    }

    /// The continuations of the granted waiters, removed from the table.
    private static func claim(_ ids: [UInt64], from state: inout State) -> [CheckedContinuation<SlotOutcome, Never>] {
        ids.compactMap { state.waiting.removeValue(forKey: $0) }
    }
}
