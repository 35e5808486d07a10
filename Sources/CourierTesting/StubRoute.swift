import Courier
import Foundation
import Testing

/// A route of a ``StubTransport``: what it matches, what it answers, and how often it was used.
/// ``StubTransport/route(_:_:sourceLocation:)`` returns one, for `StubTransport.verify(_:times:)`.
public final class StubRoute: Sendable, CustomStringConvertible {
    /// What the route answers.
    public let matcher: RequestMatcher
    let answer: StubAnswer
    /// Where the route was declared (reported when it is never used).
    public let sourceLocation: SourceLocation
    private let hits = Locked(0)

    init(matcher: RequestMatcher, answer: StubAnswer, sourceLocation: SourceLocation) {
        self.matcher = matcher
        self.answer = answer
        self.sourceLocation = sourceLocation
    }

    /// How many requests this route answered.
    public var hitCount: Int { hits.withLock { $0 } }

    /// Whether the route answered as many times as its answer allows (``StubAnswer/times(_:)``).
    public var isExhausted: Bool {
        guard let limit = answer.limit else { return false }
        return hitCount >= limit
    }

    public var description: String { matcher.description }

    /// Counts a hit unless the route is exhausted; the hit's number (from 1), or `nil`.
    func claim() -> Int? {
        hits.withLock { hits in
            if let limit = answer.limit, hits >= limit { return nil }
            hits += 1
            return hits
        }
    }
}
