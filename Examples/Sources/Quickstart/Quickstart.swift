// The README's quick start, runnable.
//
//   swift run --package-path Examples Quickstart                  # answers from built-in stubs, offline
//   swift run --package-path Examples Quickstart --base-url URL   # against an httpbin server
import Courier
import Foundation

/// The API, described as an enum: one case per call.
enum HTTPBinAPI: TargetType {
    case search(String)
    case createItem(NewItem)
    case status(Int)

    var baseURL: URL { Configuration.baseURL }
    var headers: [String: String] { ["Accept": "application/json"] }

    var path: String {
        switch self {
        case .search: "get"
        case .createItem: "anything/items"
        case .status(let code): "status/\(code)"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .createItem: .post
        default: .get
        }
    }

    var task: HTTPTask {
        switch self {
        case .search(let term): .parameters(["q": "\(term)", "page": 1], encoding: .url)
        case .createItem(let item): .json(item)
        case .status: .plain
        }
    }

    var validation: ValidationType { .successCodes }

    // What stubs answer with: the shapes httpbin sends back.
    var sampleData: Data {
        switch self {
        case .search(let term): Data(#"{"args":{"q":"\#(term)","page":"1"},"url":"stub"}"#.utf8)
        case .createItem: Data(#"{"json":{"name":"stubbed item","quantity":1},"method":"POST"}"#.utf8)
        case .status: Data()
        }
    }

    var sampleResponse: SampleResponse {
        switch self {
        case .status(let code): .networkResponse(code, sampleData)
        default: .networkResponse(200, sampleData)
        }
    }
}

struct NewItem: Codable, Sendable {
    var name: String
    var quantity: Int
}

struct SearchEcho: Decodable {
    var args: [String: String]
}

enum Configuration {
    static let liveURL: URL? = {
        let arguments = CommandLine.arguments
        guard let index = arguments.firstIndex(of: "--base-url"), index + 1 < arguments.count else { return nil }
        return URL(string: arguments[index + 1])
    }()

    static var baseURL: URL { liveURL ?? URL(string: "https://httpbin.example")! }
}

@main
struct Quickstart {
    static func main() async {
        let live = Configuration.liveURL != nil
        let provider = Provider<HTTPBinAPI>(
            stubClosure: live ? Provider.neverStub : Provider.immediatelyStub,
            timeout: .seconds(10)
        )
        print(
            live
                ? "Talking to \(Configuration.baseURL.absoluteString)"
                : "Using built-in stubs (pass --base-url URL for a real server)")

        do {
            let echo = try await provider.request(.search("swift")).map(SearchEcho.self)
            print("search echoed q=\(echo.args["q"] ?? "?") page=\(echo.args["page"] ?? "?")")

            let created = try await provider.request(.createItem(NewItem(name: "widget", quantity: 3)))
                .map(NewItem.self, atKeyPath: "json")
            print("created \(created.name) × \(created.quantity)")

            _ = try await provider.request(.status(503))
        } catch let error where error.response?.statusCode == 503 {
            print("status 503 rejected by validation: \(error.localizedDescription)")
        } catch {
            print("failed: \(error.localizedDescription)")
            exit(1)
        }
    }
}
