import Courier
import CourierTracing
import Foundation

// The samples of CourierTracing.docc and TracingPlugin's documentation, compiled as written (not
// run). A change here goes into the documentation too.

enum GitHub: TargetType {
    case user(String)
    var baseURL: URL { URL(string: "https://api.github.com")! }
    var path: String {
        switch self {
        case .user(let name): "users/\(name)"
        }
    }
    var headers: [String: String] { [:] }
}

func tracingSample(token: String) -> Provider<GitHub> {
    let provider = Provider<GitHub>(plugins: [.accessToken { _ in token }, .tracing()])
    return provider
}
