import Foundation

/// Durable downloads (issue 27): one exchange of a download that may resume, as the transfer
/// stage sees it (through ``current``): the transport reports each response head here, and
/// progress is counted from the bytes already on disk once the head says the body continues them.
final class ResumeAttempt: Sendable {
    /// The attempt the provider is running on this task, if it may resume.
    @TaskLocal static var current: ResumeAttempt?

    /// What the request offered (`nil`: sent without `Range`).
    let offer: ResumeRules.Offer?
    private struct State: Sendable {
        var head: Response?
        var offset: Int64 = 0
    }

    private let state = Locked(State())

    init(offer: ResumeRules.Offer?) {
        self.offer = offer
    }

    /// The last head the transport reported (the answer's, after any redirects).
    var head: Response? { state.withLock { $0.head } }

    /// Called by the transport (``Transfer/downloadHeadArrived``) as each head arrives.
    func headArrived(_ head: Response) {
        let decision = ResumeRules.decide(
            status: head.statusCode, header: { head.value(forHTTPHeaderField: $0) }, offer: offer)
        let offset = decision == .append ? offer?.length ?? 0 : 0
        state.withLock {
            $0.head = head
            $0.offset = offset
        }
    }

    /// `report`, told the bytes already on disk when the body continues them (from the answer's
    /// head on, so its first event shows them done).
    func progress(
        _ report: @escaping @Sendable (TransferProgress, _ kept: Int64) -> Void
    ) -> @Sendable (TransferProgress) -> Void {
        { [state] event in
            report(event, state.withLock { $0.offset })
        }
    }
}

/// Why a resumed download could not be completed, in ``CourierError/underlying(_:_:)`` with the
/// response. Its bytes are not kept, except those of a `206` that ended where its
/// `Content-Range` said before the entity's end: they continue the file, and a later attempt asks
/// for the rest after them.
public enum DownloadResumeFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `206` body did not end where its `Content-Range` said, or the range stopped before the
    /// entity's end: the file would not be the entity.
    case rangeMismatch(expectedLength: Int64, actualLength: Int64)
    /// A `206` answered a request sent without `Range`, and its `Content-Range` (quoted) is not
    /// the whole entity: its body is not the file.
    case unrequestedPartialContent(contentRange: String?)

    public var description: String {
        switch self {
        case .rangeMismatch(let expected, let actual):
            "the resumed download has \(actual) bytes where its Content-Range says \(expected)"
        case .unrequestedPartialContent(let range):
            "a 206 (Content-Range \(range ?? "missing")) answered a request for the whole file"
        }
    }
}
