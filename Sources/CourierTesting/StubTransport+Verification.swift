import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Checks of what a ``StubTransport`` received. A failed check records a Swift Testing issue at
/// the caller's line, with the requests that did arrive, and returns `false`.
extension StubTransport {
    /// Checks that `route` answered exactly `count` requests.
    /// - Parameters:
    ///   - route: A route from ``route(_:_:sourceLocation:)``.
    ///   - count: How many.
    ///   - sourceLocation: Where a failure is reported. Default: the caller.
    /// - Returns: Whether the check passed.
    @discardableResult
    public func verify(_ route: StubRoute, times count: Int, sourceLocation: SourceLocation = #_sourceLocation) -> Bool
    {
        check(
            route.hitCount == count, "answered \(count) time(s)", actual: route.hitCount, route.description,
            sourceLocation)
    }

    /// Checks that `route` answered at least `count` requests.
    /// - Parameters:
    ///   - route: A route from ``route(_:_:sourceLocation:)``.
    ///   - count: The least.
    ///   - sourceLocation: Where a failure is reported. Default: the caller.
    /// - Returns: Whether the check passed.
    @discardableResult
    public func verify(
        _ route: StubRoute, atLeast count: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        check(
            route.hitCount >= count, "answered at least \(count) time(s)", actual: route.hitCount, route.description,
            sourceLocation)
    }

    /// Checks that exactly `count` of the requests received match `matcher`, whichever route
    /// answered them (or none).
    /// - Parameters:
    ///   - matcher: The requests to count.
    ///   - count: How many.
    ///   - sourceLocation: Where a failure is reported. Default: the caller.
    /// - Returns: Whether the check passed.
    @discardableResult
    public func verify(
        _ matcher: RequestMatcher, times count: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let actual = requests.filter { matcher.matches($0.request) }.count
        return check(actual == count, "requested \(count) time(s)", actual: actual, matcher.description, sourceLocation)
    }

    /// Checks that exactly `count` requests with this method and path were received.
    /// - Parameters:
    ///   - method: The method, or `nil` for any.
    ///   - path: The path pattern, as for ``on(_:_:_:sourceLocation:)``.
    ///   - count: How many.
    ///   - sourceLocation: Where a failure is reported. Default: the caller.
    /// - Returns: Whether the check passed.
    @discardableResult
    public func verify(
        _ method: HTTPMethod?, _ path: String, times count: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        verify(Self.matcher(method, path), times: count, sourceLocation: sourceLocation)
    }

    /// Checks that every route answered at least one request; a failure names each unused route
    /// and where it was declared.
    /// - Parameter sourceLocation: Where a failure is reported. Default: the caller.
    /// - Returns: Whether the check passed.
    @discardableResult
    public func verifyAllRoutesUsed(sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let unused = unusedRoutes
        guard !unused.isEmpty else { return true }
        let list = unused.map { "  - \($0) (\($0.sourceLocation.fileName):\($0.sourceLocation.line))" }
        Issue.record(
            Comment(rawValue: "Routes never used:\n" + list.joined(separator: "\n") + receivedSummary()),
            sourceLocation: sourceLocation)
        return false
    }

    /// Checks that requests matching `matchers` arrived in this order (other requests may come
    /// before, between and after them).
    /// - Parameters:
    ///   - matchers: The requests, in the order expected.
    ///   - sourceLocation: Where a failure is reported. Default: the caller.
    /// - Returns: Whether the check passed.
    @discardableResult
    public func verifyOrder(_ matchers: [RequestMatcher], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        var next = 0
        for recorded in requests where next < matchers.count && matchers[next].matches(recorded.request) {
            next += 1
        }
        guard next < matchers.count else { return true }
        Issue.record(
            Comment(
                rawValue: "Requests not in the expected order: no request matching \(matchers[next]) came after "
                    + (next == 0 ? "the start" : "one matching \(matchers[next - 1])") + "." + receivedSummary()),
            sourceLocation: sourceLocation)
        return false
    }

    private func check(
        _ passed: Bool, _ expectation: String, actual: Int, _ subject: String, _ sourceLocation: SourceLocation
    ) -> Bool {
        guard !passed else { return true }
        Issue.record(
            Comment(
                rawValue: "Expected \(subject) to be \(expectation); it was \(actual) time(s)." + receivedSummary()),
            sourceLocation: sourceLocation)
        return false
    }

    /// The requests received, one a line (at most 20), for failure messages.
    private func receivedSummary() -> String {
        let received = requests
        guard !received.isEmpty else { return "\nNo requests were received." }
        var lines = received.prefix(20).map { recorded in
            let url = recorded.request.url.map { Redaction.string($0.absoluteString) } ?? "<no URL>"
            return "  - \(recorded.request.httpMethod ?? "GET") \(url)"
        }
        if received.count > 20 { lines.append("  - … and \(received.count - 20) more") }
        return "\nRequests received:\n" + lines.joined(separator: "\n")
    }
}
