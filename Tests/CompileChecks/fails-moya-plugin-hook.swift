// A plugin written in Moya's spelling, `willSend(_:target:)`, would compile as a method of its own
// that the provider never calls. Courier refuses it, with a message that names the context form.
// expect-error: was used to satisfy a requirement of protocol 'Plugin': Courier's plugin hooks take a RequestContext, not a target
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct MoyaStyleLogger: Plugin {
    func willSend(_ request: URLRequest, target: any TargetType) async {
        print("sending", request)
    }
}
