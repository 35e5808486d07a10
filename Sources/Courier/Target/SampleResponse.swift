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
}
