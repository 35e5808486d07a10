import Courier
import Foundation

/// A small API as an enum, covering each task kind.
enum TestAPI: TargetType {
    var headers: [String: String] { [:] }
    case plain
    case item(id: Int)
    case search(String)
    case create(Item)
    case upload(Data)
    case status(Int)
    case validated(Int, ValidationType)

    var baseURL: URL { URL(string: "https://api.example.com/v1")! }

    var path: String {
        switch self {
        case .plain: ""
        case .item(let id): "items/\(id)"
        case .search: "search"
        case .create: "items"
        case .upload: "upload"
        case .status(let code), .validated(let code, _): "status/\(code)"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .create, .upload: .post
        default: .get
        }
    }

    var task: HTTPTask {
        switch self {
        case .search(let query): .parameters(["q": "\(query)"], encoding: .queryString)
        case .create(let item): .json(item)
        case .upload(let data): .data(data)
        default: .plain
        }
    }

    var validation: ValidationType {
        switch self {
        case .validated(_, let validation): validation
        default: .none
        }
    }

    var sampleData: Data {
        switch self {
        case .item(let id): Data(#"{"id":\#(id),"name":"Item \#(id)"}"#.utf8)
        default: Data("sample".utf8)
        }
    }

    var sampleResponse: SampleResponse {
        switch self {
        case .status(let code), .validated(let code, _): .networkResponse(code, sampleData)
        default: .networkResponse(200, sampleData)
        }
    }
}

struct Item: Codable, Hashable, Sendable {
    var id: Int
    var name: String
}

/// The same kind of API as a struct per resource.
struct UserResource: TargetType {
    var headers: [String: String] { [:] }
    var id: Int
    var baseURL: URL { URL(string: "https://users.example.com")! }
    var path: String { "users/\(id)" }
    var sampleData: Data { Data(#"{"id":\#(id),"name":"User"}"#.utf8) }
}

/// A target whose base URL and path are given, for URL-rule tests.
struct PathTarget: TargetType {
    var headers: [String: String] { [:] }
    var baseURL: URL
    var path: String

    init(_ base: String, _ path: String) {
        self.baseURL = URL(string: base)!
        self.path = path
    }
}
