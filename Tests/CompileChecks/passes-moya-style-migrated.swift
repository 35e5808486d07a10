// The same Moya-style target once migrated: the `?` dropped, `validationType` kept as written,
// parameters from variables without wrapping.
import Courier
import Foundation

enum Migrated: TargetType {
    case search(query: String, page: Int, ref: String?)
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "search" }
    var method: HTTPMethod { .get }
    var task: HTTPTask {
        switch self {
        case .search(let query, let page, let ref):
            .parameters(["q": query, "page": page, "ref": ref], encoding: .queryString)
        }
    }
    var headers: [String: String] { ["Authorization": "Bearer token"] }
    var validationType: ValidationType { .successCodes }
}
