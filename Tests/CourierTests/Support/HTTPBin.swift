import Courier
import Foundation

/// The local httpbin started by `scripts/test`, or `nil` when the tests run without it.
enum HTTPBin {
    static let baseURL: URL? = ProcessInfo.processInfo.environment["COURIER_HTTPBIN_URL"].flatMap(URL.init(string:))
    static var isAvailable: Bool { baseURL != nil }
}

/// A request to the local httpbin, described as a struct target.
struct Bin: TargetType {
    var path: String
    var method: HTTPMethod = .get
    var task: HTTPTask = .plain
    var headers: [String: String] = [:]
    var validation: ValidationType = .none
    var timeout: Duration? = nil

    // Integration tests run only when the server's URL is set (see `HTTPBin`).
    var baseURL: URL { HTTPBin.baseURL ?? URL(string: "http://127.0.0.1:9")! }
}

/// What httpbin echoes back for /anything, /get and /post.
struct Echo: Decodable {
    var args: [String: StringOrList]
    var form: [String: StringOrList]?
    var headers: [String: String]
    var json: JSONValue?
    var data: String?
    var method: String?
    var url: String
}

/// httpbin writes a repeated query key as a list and a single one as a string.
enum StringOrList: Decodable, Equatable {
    case one(String)
    case many([String])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(String.self) {
            self = .one(value)
        } else {
            self = .many(try container.decode([String].self))
        }
    }
}

/// Any JSON value, for comparing echoed bodies.
enum JSONValue: Decodable, Equatable {
    case string(String), number(Double), bool(Bool), null
    case array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}
