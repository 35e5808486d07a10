// Hooks that mix the two spellings (the target form's `attempt:` with a context, a context passed
// as `target:`) are refused too: each would compile and never be called.
// expect-error: was used to satisfy a requirement of protocol 'Plugin': Courier's plugin hooks take a RequestContext, not a target
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct RetryCounter: Plugin {
    func willRetry(
        _ request: URLRequest, after error: CourierError, attempt: Int, delay: Duration, context: RequestContext
    ) async {}
}

struct Mixed: Plugin {
    func didReceive(_ result: Result<Response, CourierError>, target: RequestContext) async {}
}
