import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session's delegate queue: serial, and bounded, so a fast response cannot outrun the code
/// that stores it.
///
/// FoundationNetworking hands each received chunk to the delegate with `addOperation`, from the
/// thread that drives libcurl, and never waits. When the delegate is slower than the network (on
/// loopback, copying a 1 GiB download into the page cache is), those operations pile up: 100–450
/// MB peak for 1 GiB, measured. Here `addOperation` waits while `limit` operations are pending, so
/// the libcurl thread stops reading and TCP pushes back on the server: ~50 MB peak.
///
/// Delegate callbacks must therefore never call back into the session synchronously (that thread
/// may be waiting here); the router dispatches such calls asynchronously.
final class BackpressureQueue: OperationQueue, @unchecked Sendable {
    // @unchecked: OperationQueue is thread-safe but not declared Sendable by FoundationNetworking;
    // the only state added is a semaphore, which is thread-safe too.
    private let slots: DispatchSemaphore

    /// - Parameter limit: How many operations may be pending (a received chunk is at most 16 KB).
    init(limit: Int = 64) {
        slots = DispatchSemaphore(value: limit)
        super.init()
        maxConcurrentOperationCount = 1
        name = "Courier.URLSessionTransport.delegate"
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        // An operation that enqueues another must not wait for itself to finish.
        if OperationQueue.current === self {
            super.addOperation(block)
            return
        }
        slots.wait()
        super.addOperation { [slots] in
            block()
            slots.signal()
        }
    }
}
