import Foundation

/// Why a ``ReplayTransport`` could not answer. Each description says what to do next.
public enum ReplayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Replay mode, and the fixture file does not exist.
    case fixtureMissing(URL)
    /// The fixture file is not a HAR file Courier can read.
    case unreadableFixture(URL, reason: String)
    /// No recorded exchange matches the request: what was asked (redacted) and the recorded
    /// requests that came closest, each with what differs.
    case noMatch(request: String, fixture: URL, closest: [String])
    /// A body to record is larger than ``ReplayTransport``'s `maxBodyBytes`.
    case bodyTooLarge(limit: Int)
    /// The fixture name is empty, absolute, or climbs out of its folder (`..`).
    case invalidFixtureName(String)
    /// The recorded stream ends here: its reader stopped reading while it was recorded, so the
    /// fixture holds only what had arrived by then. Thrown after the recorded chunks, to a reader
    /// that reads further, and by `send` for such an exchange.
    case recordingCutShort(request: String, fixture: URL)

    static let howToRecord =
        "To record it, run the tests with \(ReplayTransport.Mode.environmentVariable)=missing (records only what is"
        + " missing) or \(ReplayTransport.Mode.environmentVariable)=record (records the fixture again), or pass"
        + " mode: .recordMissing."

    public var description: String {
        switch self {
        case .fixtureMissing(let url):
            "No replay fixture at \(url.path). \(Self.howToRecord)"
        case .unreadableFixture(let url, let reason):
            "The replay fixture at \(url.path) cannot be read: \(reason). Record it again, or fix the file."
        case .noMatch(let request, let fixture, let closest):
            "No recorded exchange in \(fixture.lastPathComponent) matches \(request)."
                + (closest.isEmpty
                    ? " The fixture has no exchanges."
                    : " Closest recorded requests:\n" + closest.map { "  - \($0)" }.joined(separator: "\n") + "\n")
                + " \(Self.howToRecord)"
        case .bodyTooLarge(let limit):
            "A body larger than \(limit) bytes is not written to a replay fixture (ReplayTransport's maxBodyBytes)."
        case .invalidFixtureName(let name):
            "\"\(name)\" is not a fixture name: use a relative name without '..'."
        case .recordingCutShort(let request, let fixture):
            "The stream of \(request) in \(fixture.lastPathComponent) was recorded only up to where its reader stopped"
                + " reading; nothing after that was recorded. Record it again (\(ReplayTransport.Mode.environmentVariable)"
                + "=record) with a test that reads as far as this one."
        }
    }
}
