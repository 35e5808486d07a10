import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a stubbed request answers with.
public enum SampleResponse: Sendable {
    /// A response with this status code and body, and no headers.
    case networkResponse(Int, Data)
    /// This exact response and body (use it to stub headers).
    case response(HTTPURLResponse, Data)
    /// The transport fails with this error (it reaches the caller as ``CourierError/underlying(_:_:)``).
    case networkError(any Error)
    /// A body that arrives in chunks, `interval` apart on the provider's clock (the first one
    /// too), for ``Provider/stream(_:idleTimeout:totalTimeout:)``: the head at once, then each
    /// chunk. A plain request gets the chunks joined, without waiting.
    case stream(statusCode: Int = 200, headers: [String: String] = [:], chunks: [Data], interval: Duration = .zero)

    /// Server-Sent Events, one chunk each, `interval` apart, with
    /// `Content-Type: text/event-stream`.
    /// - Parameters:
    ///   - events: The events.
    ///   - interval: The wait before each event. Default: none.
    /// - Returns: A ``stream(statusCode:headers:chunks:interval:)`` sample; a ``networkError(_:)``
    ///   with the ``CourierError/invalidUse(_:)`` of ``ServerSentEvent/encoded()`` when an event
    ///   cannot be written as a stream.
    public static func events(_ events: [ServerSentEvent], interval: Duration = .zero) -> SampleResponse {
        do throws(CourierError) {
            var chunks: [Data] = []
            for event in events { chunks.append(try event.encoded()) }
            return .stream(
                statusCode: 200, headers: ["Content-Type": "text/event-stream"], chunks: chunks, interval: interval)
        } catch {
            return .networkError(error)
        }
    }
}
