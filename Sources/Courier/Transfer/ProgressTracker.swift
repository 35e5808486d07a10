/// The bookkeeping behind progress events: a pure state machine, fed transport reports, that
/// returns the event to publish (or `nil` when nothing visible changed).
///
/// Guarantees: `fraction` never decreases within an attempt (``restart()`` starts it again); it
/// is `nil` while the main direction's total is
/// unknown, or 0 (an answer without a body) and the transfer not completed; exactly one event is
/// completed, the last; nothing is emitted after it.
struct ProgressTracker {
    enum Direction { case upload, download }

    /// The direction `fraction` follows.
    let primary: Direction
    private(set) var upload: ProgressEvent.Bytes?
    private(set) var download: ProgressEvent.Bytes?
    private var lastFraction: Double?
    private(set) var isFinished = false

    /// - Parameter uploadLength: The request body's size; `nil` or 0 when there is no body, making
    ///   the download the main direction.
    init(uploadLength: Int64?) {
        if let uploadLength, uploadLength > 0 {
            primary = .upload
            upload = ProgressEvent.Bytes(completed: 0, total: uploadLength)
        } else {
            primary = .download
        }
    }

    /// - Parameters:
    ///   - report: The transport's report.
    ///   - kept: Bytes of the download already on disk, which the answer's body continues (a
    ///     resumed download): counted done from the answer's head on, and in its total.
    mutating func handle(_ report: TransferProgress, kept: Int64 = 0) -> ProgressEvent? {
        guard !isFinished else { return nil }
        switch report {
        case .sent(let bytes, let total):
            let known = total.flatMap { $0 > 0 ? $0 : nil } ?? upload?.total
            let completed = max(bytes, upload?.completed ?? 0)
            let next = ProgressEvent.Bytes(completed: completed, total: known)
            guard next != upload else { return nil }
            upload = next
        case .responseStarted(let expectedLength):
            download = ProgressEvent.Bytes(
                completed: kept, total: expectedLength.flatMap { $0 >= 0 ? $0 + kept : nil })
        case .received(let bytes):
            var next = download ?? ProgressEvent.Bytes(completed: kept, total: nil)
            next.completed = max(next.completed, bytes + kept)
            if let total = next.total, next.completed > total {
                // More than announced (a lying or compressed length): the total was wrong.
                next.total = nil
            }
            guard next != download else { return nil }
            download = next
        }
        return event(response: nil)
    }

    /// Another attempt begins: nothing of this transfer has moved yet.
    mutating func restart() {
        guard !isFinished else { return }
        if let total = upload?.total { upload = ProgressEvent.Bytes(completed: 0, total: total) }
        download = nil
        lastFraction = nil
    }

    /// The last event: completed, fraction 1.
    mutating func finish(with response: Response) -> ProgressEvent? {
        guard !isFinished else { return nil }
        isFinished = true
        lastFraction = 1
        return ProgressEvent(upload: upload, download: download, fraction: 1, response: response)
    }

    private mutating func event(response: Response?) -> ProgressEvent {
        let main = primary == .upload ? upload : download
        // Nothing to move (an answer without a body, announced at its head) is no fraction until
        // the transfer completes: that answer may not be the last (a status retried, a credential
        // refreshed and sent again), and a fraction of 1 shown for it would hold the next
        // answer's whole body at 1.
        let current = main?.total == 0 ? nil : main?.fraction
        var fraction: Double?
        if let current {
            // Never backwards.
            fraction = min(max(current, lastFraction ?? 0), 1)
            lastFraction = fraction
        } else {
            // Unknown total: indeterminate, unless a fraction was already shown (keep it).
            fraction = lastFraction
        }
        return ProgressEvent(upload: upload, download: download, fraction: fraction, response: response)
    }
}
