import Foundation
import Instrumentation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Writes a tracer's values into a request's headers, replacing a header of the same name.
struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into request: inout URLRequest) {
        request.setValue(value, forHTTPHeaderField: key)
    }
}
