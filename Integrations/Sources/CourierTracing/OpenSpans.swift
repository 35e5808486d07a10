import Courier
import Tracing

/// The spans of the calls in flight, by call. Entries live from the call's `prepare` to its
/// `didFinish`, so there are never more than calls in flight.
actor OpenSpans {
    private var spans: [RequestID: any Span] = [:]

    /// Keeps the call's span until it is closed.
    func insert(_ span: any Span, for id: RequestID) { spans[id] = span }

    /// The call's span, if it is open.
    func open(_ id: RequestID) -> (any Span)? { spans[id] }

    /// Removes and returns the call's span.
    func close(_ id: RequestID) -> (any Span)? { spans.removeValue(forKey: id) }
}
