// The README's samples, as written there (scripts/readme-snippets checks it), and the DocC
// articles' samples that came from the README. A line ending in `// scaffolding` is not shown.
import Courier
import Foundation

// MARK: Quick start

enum GitHub: TargetType {
    case user(String)
    case createIssue(repo: String, NewIssue)

    var baseURL: URL { URL(string: "https://api.github.com")! }
    var headers: [String: String] { ["Accept": "application/vnd.github+json"] }

    var path: String {
        switch self {
        case .user(let login): "users/\(login)"
        case .createIssue(let repo, _): "repos/\(repo)/issues"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .user: .get
        case .createIssue: .post
        }
    }

    var task: HTTPTask {
        switch self {
        case .user: .plain
        case .createIssue(_, let issue): .json(issue)
        }
    }

    var validation: ValidationType { .successCodes }
}

struct NewIssue: Encodable, Sendable { var title: String }
struct User: Decodable {
    var login: String
    var id: Int
}

func quickStart() async throws {  // scaffolding
    let provider = Provider<GitHub>()
    let user = try await provider.request(.user("octocat")).map(User.self)
    _ = user  // scaffolding

    do {
        let response = try await provider.request(.createIssue(repo: "me/app", NewIssue(title: "Bug")))
        _ = response  // scaffolding
    } catch {
        // error is CourierError
        if case .statusCode(let response) = error { print(response.statusCode) }
        if error.isCancellation { return }
    }
}

struct GitHubError: Decodable, Error, Sendable { var message: String }

func apiErrors() async {  // scaffolding
    let github = Provider<GitHub>(errorBody: .json(GitHubError.self))
    do {
        _ = try await github.request(.createIssue(repo: "me/app", NewIssue(title: "")))
    } catch {
        if let problem = error.apiError(as: GitHubError.self) { print(problem.message) }
    }
}

// MARK: Stubbing

extension GitHub {
    var sampleData: Data {
        switch self {
        case .user(let login): Data(#"{"login":"\#(login)","id":1}"#.utf8)
        case .createIssue: Data(#"{"number":1}"#.utf8)
        }
    }
}

// MARK: Provider

func configuredProvider() -> Provider<GitHub> {
    Provider<GitHub>(
        endpointClosure: { target in try Endpoint(target: target).adding(headers: ["X-App": "1"]) },
        requestClosure: { endpoint in
            var request = try endpoint.urlRequest()
            request.setValue("Bearer \(try await tokens.current())", forHTTPHeaderField: "Authorization")
            return request
        },
        stubClosure: Provider.neverStub,
        transport: URLSessionTransport(),
        plugins: [MyLogger()],
        clock: ContinuousClock(),
        timeout: .seconds(30)
    )
}

// MARK: Uploads, downloads and progress

enum Files: TargetType {
    case upload(URL)
    case form(title: String, photo: URL)
    case download(id: Int, to: URL)

    var baseURL: URL { URL(string: "https://files.example.com")! }
    var headers: [String: String] { [:] }
    var path: String {
        switch self {
        case .upload, .form: "uploads"
        case .download(let id, _): "files/\(id)"
        }
    }
    var method: HTTPMethod {
        switch self {
        case .upload, .form: .post
        case .download: .get
        }
    }
    var task: HTTPTask {
        switch self {
        case .upload(let file):
            .uploadFile(file)
        case .form(let title, let photo):
            .uploadMultipart(
                MultipartFormData(parts: [
                    .init(name: "title", data: Data(title.utf8)),
                    .init(name: "photo", fileURL: photo),  // image/jpeg from the extension
                ]))
        case .download(_, let folder):
            .download(.suggestedFileName(in: folder))
        }
    }
}

func progress(_ provider: Provider<Files>) async throws {  // scaffolding
    for try await event in provider.requestWithProgress(.download(id: 7, to: downloads)) {
        if let fraction = event.fraction { print("\(Int(fraction * 100))%") }
        if let response = event.response { print("saved to", response.fileURL!.path) }
    }
}

// MARK: Cancellation and de-duplication

func cancellation(_ provider: Provider<GitHub>) async {  // scaffolding
    let task = Task { try await provider.request(.user("octocat")) }
    task.cancel()
    do { _ = try await task.value } catch let error as CourierError where error.isCancellation {} catch {}
    _ = Provider<GitHub>(deduplication: .enabled)
}

// MARK: Plugins

struct Signer: Plugin {
    func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
        var request = request
        request.setValue(try await sign(request), forHTTPHeaderField: "X-Signature")
        return request
    }
}

func builtInPlugins() {  // scaffolding
    let activity = NetworkActivityPlugin()
    let provider = Provider<GitHub>(plugins: [
        .logger(.verbose),  // through a closure; stderr by default
        .accessToken { _ in try await keychain.token() },  // for AccessTokenAuthorizable targets
        .credentials { _ in ("user", "secret") },  // HTTP Basic, sent up front
        activity,  // began/ended + AsyncStream of counts
    ])
    _ = provider  // scaffolding
}

// MARK: Retries and credential refresh

func retries() {  // scaffolding
    let provider = Provider<GitHub>(retryPolicy: .default)
    let careful = RetryPolicy(maxAttempts: 5, baseDelay: .seconds(1), maxDelay: .seconds(20))
    _ = (provider, careful)  // scaffolding
}

struct OAuth: Authenticator {
    let client: AuthClient
    func apply(_ token: Token, to request: inout URLRequest) {
        request.setValue("Bearer \(token.access)", forHTTPHeaderField: "Authorization")
    }
    func refresh(_ token: Token) async throws -> Token { try await client.refresh(token) }
    // requiresRefresh(_:) defaults to status 401
}

func refresh() {  // scaffolding
    let auth = Authentication(OAuth(client: client), credential: saved)  // share it between providers
    let provider = Provider<GitHub>(authentication: auth)
    _ = provider  // scaffolding
}

// MARK: Streaming responses and Server-Sent Events

enum Chat: TargetType {
    case completion(String)
    case events(room: String)

    var baseURL: URL { URL(string: "https://chat.example.com")! }
    var headers: [String: String] { [:] }
    var path: String {
        switch self {
        case .completion: "v1/completions"
        case .events(let room): "rooms/\(room)/events"
        }
    }
    var method: HTTPMethod {
        switch self {
        case .completion: .post
        case .events: .get
        }
    }
    var task: HTTPTask {
        switch self {
        case .completion(let prompt): .json(["prompt": prompt, "stream": "true"])
        case .events: .plain
        }
    }
}

func streamingSample(_ provider: Provider<Chat>, prompt: String) async throws {  // scaffolding
    let stream = try await provider.stream(.completion(prompt), idleTimeout: .seconds(30))
    print(stream.statusCode)
    for try await event in stream.events {  // ServerSentEvent: id, event, data, retry
        if event.data == "[DONE]" { break }
        print(event.data)
    }
}
