// A target as Moya users write it: optional headers. Courier must refuse it at compile time
// instead of ignoring the headers.
// expect-error: candidate has non-matching type '[String : String]?'
import Courier
import Foundation

enum MoyaStyle: TargetType {
    case user
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "user" }
    var method: HTTPMethod { .get }
    var task: HTTPTask { .plain }
    var headers: [String: String]? { ["Authorization": "Bearer token"] }
}
