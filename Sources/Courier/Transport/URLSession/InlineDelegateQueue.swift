import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session's delegate queue.
///
/// On Linux, FoundationNetworking hands every delegate callback and completion handler to this
/// queue with `addOperation`, from the serial queue that drives libcurl. Running them inline on
/// that queue instead of hopping to another thread does two things:
/// - **latency**: a request's result reaches the waiting task with one thread handoff, as
///   FoundationNetworking's own `data(for:)` does, instead of two (measured: ~10% of sequential
///   throughput on loopback);
/// - **backpressure**: a response body written to a file is written on libcurl's thread, so when the
///   disk is slower than the network libcurl stops reading and TCP pushes back on the server.
///   Handing chunks to another thread without waiting let them pile up: 100–450 MB peak for a
///   1 GiB download, against ~50 MB inline.
///
/// Callbacks are still serialized (libcurl's queue is serial) and stay short: a lock, an append or
/// a write, resuming a continuation. They must never call into the session synchronously, since
/// the session's queue is the one running them; the router dispatches such calls asynchronously.
///
/// On Apple platforms URLSession manages its own threads and memory, and this is a plain serial
/// queue.
// @unchecked: URLSession's API takes an `OperationQueue`, an open Foundation class not marked
// Sendable; this subclass adds no state of its own, and FoundationNetworking calls it from its queue.
final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
    override init() {
        super.init()
        maxConcurrentOperationCount = 1
        name = "Courier.URLSessionTransport.delegate"
    }

    #if canImport(FoundationNetworking)
        override func addOperation(_ block: @escaping @Sendable () -> Void) {
            block()
        }
    #endif
}
