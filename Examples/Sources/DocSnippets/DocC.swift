// The DocC articles' samples that the README does not already have.
import Courier
import Foundation

// Defining Targets

enum Blog: TargetType {
    case posts(page: Int)
    case post(id: Int)

    var baseURL: URL { URL(string: "https://blog.example.com/api")! }
    var headers: [String: String] { [:] }
    var path: String {
        switch self {
        case .posts: "posts"
        case .post(let id): "posts/\(id)"
        }
    }
    var task: HTTPTask {
        switch self {
        case .posts(let page): .parameters(["page": page], encoding: .queryString)
        case .post: .plain
        }
    }
}

struct UserResource: TargetType {
    var id: Int
    var baseURL: URL { URL(string: "https://users.example.com")! }
    var headers: [String: String] { [:] }
    var path: String { "users/\(id)" }
}

func multiTarget() async throws {
    _ = try await Provider<MultiTarget>().request(MultiTarget(UserResource(id: 1)))
}

// Plugins

struct KeySigner: Plugin {
    let keys: KeyStore
    func prepare(_ request: consuming URLRequest, context: RequestContext) async throws -> URLRequest {
        var request = request
        request.setValue(try await keys.signature(for: request), forHTTPHeaderField: "X-Signature")
        return request
    }
}

func pluginList() {
    _ = Provider<GitHub>(plugins: [
        .logger(.verbose),
        .accessToken { _ in try await tokens.current() },
        .credentials { _ in ("user", "secret") },
        .networkActivity { change, _ in print(change) },
    ])
}

struct Composite: Plugin {
    let plugins: [any Plugin]
    func willSend(_ request: URLRequest, context: RequestContext) async {
        for plugin in plugins { await plugin.willSend(request, context: context) }
    }
}

func callAPluginDirectly(_ request: URLRequest) async {
    let context = RequestContext(target: GitHub.user("ada"))
    await Composite(plugins: [.logger()]).willSend(request, context: context)
}

// Migrating from Moya

func searchTask(query: String, page: Int?) -> HTTPTask {
    var parameters: [String: any ParameterConvertible] = ["q": query]
    if let page { parameters["page"] = page }
    return .parameters(parameters, encoding: .queryString)
}

struct Search: TargetType {
    var parameters: Parameters = [:]  // stored: [String: ParameterValue]
    mutating func set(_ name: String, _ value: some ParameterConvertible) {
        parameters[name] = ParameterValue(value)
    }
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "search" }
    var headers: [String: String] { [:] }
    var task: HTTPTask { .parameters(parameters, encoding: .queryString) }
}

func moyaLikeLogger() -> NetworkLoggerPlugin {
    NetworkLoggerPlugin(
        configuration: .init(
            options: [.method, .url, .requestHeaders, .requestBody, .responseStatus, .successResponseBody],
            responseBodyFormatter: { data, _ in NetworkLoggerPlugin.prettyJSON(data) },
            output: { print($0) }))
}

func optionalAuthentication(session: String?) -> Provider<GitHub> {
    Provider(authentication: session.map { Authentication(SessionToken(), credential: $0) })
}

struct SessionToken: Authenticator {
    func apply(_ credential: String, to request: inout URLRequest) {
        request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
    }
    func refresh(_ credential: String) async throws -> String { credential }
}

// Uploads, Downloads and Progress

func form() -> MultipartFormData {
    MultipartFormData(parts: [
        .init(name: "title", data: Data("Holiday".utf8)),
        .init(name: "photo", fileURL: photoURL),
    ])
}

func progressBar(_ provider: Provider<Files>) async throws {
    for try await event in provider.requestWithProgress(.download(id: 7, to: downloads)) {
        if let fraction = event.fraction { bar.update(fraction) }
        if let response = event.response { print("saved to", response.fileURL!.path) }
    }
}

// Streaming Responses and Server-Sent Events

struct CompletionToken: Decodable { let text: String }
struct ExportRow: Decodable { let id: Int }

func streamingArticle(_ provider: Provider<Chat>, prompt: String, room: String) async throws {
    let stream = try await provider.stream(.completion(prompt))
    print(stream.statusCode, stream.response?.value(forHTTPHeaderField: "Content-Type") ?? "")
    for try await token in stream.decodeEvents(CompletionToken.self, until: "[DONE]") { print(token.text) }

    let feed = try await provider.stream(.events(room: room))
    for try await event in feed.events { print(event.event, event.data) }

    let export = try await provider.stream(.events(room: room))
    for try await row in export.decodeLines(ExportRow.self) { print(row.id) }
}

struct GreetingFeed: TargetType {
    var baseURL: URL { URL(string: "https://chat.example.com")! }
    var headers: [String: String] { [:] }
    var path: String { "greetings" }
    var sampleResponse: SampleResponse {
        .events([ServerSentEvent(data: "hello"), ServerSentEvent(data: "[DONE]")], interval: .milliseconds(100))
    }
}

func show(_ event: ServerSentEvent) { print(event.data) }

func eventSourceArticle(_ provider: Provider<Chat>, room: String) async throws {
    for try await event in provider.eventSource(.events(room: room), maxReconnects: 10) { show(event) }
}
