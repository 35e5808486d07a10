import Courier

/// How a transfer ends around `URLSessionTransport.invalidateAndCancel()`: the tests of the router
/// and of the transport read errors the same way.
enum InvalidationErrors {
    /// Whether `error` is `CourierError.cancelled` (a transfer in flight when the transport closed).
    static func isCancelled(_ error: (any Error)?) -> Bool {
        if case .cancelled? = error as? CourierError { true } else { false }
    }

    /// Whether `error` is the refusal of a transfer sent after the transport closed.
    static func isClosedRefusal(_ error: (any Error)?) -> Bool {
        if case .invalidUse(let reason)? = error as? CourierError { reason.contains("invalidated") } else { false }
    }
}
