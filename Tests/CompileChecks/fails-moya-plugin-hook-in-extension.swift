// The same with the hook in an extension, in Moya's synchronous form, and with a concrete target.
// expect-error: was used to satisfy a requirement of protocol 'Plugin': Courier's plugin hooks take a RequestContext, not a target
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

enum API: TargetType {
    case user
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "user" }
    var method: HTTPMethod { .get }
    var task: HTTPTask { .plain }
    var headers: [String: String] { [:] }
}

struct Stamp: Plugin {}

extension Stamp {
    func prepare(_ request: URLRequest, target: API) -> URLRequest {
        var request = request
        request.setValue("1", forHTTPHeaderField: "X-Stamp")
        return request
    }
}
