import Foundation

/// Identifies one call to a provider (`request`, `requestWithProgress`), across its attempts.
public struct RequestID: Sendable, Hashable, CustomStringConvertible {
    let uuid: UUID

    init() {
        uuid = UUID()
    }

    public var description: String { uuid.uuidString }
}

/// What every plugin hook of one call receives: which call it is, its target and its attempt.
///
/// The ``id`` is the same in every hook of a call (`prepare`, `willSend`, `didReceive`,
/// `willRetry`, `process`, `didFinish`) and different for every call, so a plugin can pair a
/// `willSend` with its `didReceive` (``NetworkActivityPlugin`` does) without tracking tasks.
public struct RequestContext: Sendable {
    /// The call.
    public let id: RequestID
    /// The target being requested (the wrapped one, for a ``MultiTarget``).
    public let target: any TargetType
    /// The attempt, from 1, as the retry policy counts them: a re-send after a credential refresh
    /// keeps its number. `0` in `prepare` (before the first send), and in `process` and
    /// `didFinish` of a call that sent nothing.
    public internal(set) var attempt: Int

    init(id: RequestID = RequestID(), target: any TargetType, attempt: Int = 0) {
        self.id = id
        self.target = target
        self.attempt = attempt
    }
}
