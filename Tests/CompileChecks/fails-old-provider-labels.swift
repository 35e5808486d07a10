// Courier's earlier initializer labels (`endpointMapping:`, `requestMapping:`, `stubBehavior:`)
// are refused with a fix-it that renames each label to Moya's name, with or without an
// authentication.
// expect-error: 'init(endpointMapping:requestMapping:stubBehavior:transport:plugins:clock:timeout:callTimeout:limits:deduplication:retryPolicy:errorBody:)' has been renamed to 'init(endpointClosure:requestClosure:stubClosure:transport:plugins:clock:timeout:callTimeout:limits:deduplication:retryPolicy:errorBody:)'
// expect-error: has been renamed to 'init(endpointClosure:requestClosure:stubClosure:transport:plugins:clock:timeout:callTimeout:limits:deduplication:retryPolicy:errorBody:authentication:)'
// expect-fixit: endpointMapping -> endpointClosure
// expect-fixit: requestMapping -> requestClosure
// expect-fixit: stubBehavior -> stubClosure
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

struct Token: Authenticator {
    func apply(_ credential: String, to request: inout URLRequest) {}
    func refresh(_ credential: String) async throws -> String { credential }
}

@Sendable func endpoint(_ target: API) throws -> Endpoint { try Endpoint(target: target) }
@Sendable func request(_ endpoint: Endpoint) throws -> URLRequest { try endpoint.urlRequest() }
@Sendable func stub(_ target: API) -> StubBehavior { .immediate }

func make(auth: Authentication<Token>) {
    _ = Provider<API>(endpointMapping: endpoint, requestMapping: request, stubBehavior: stub)
    _ = Provider<API>(stubBehavior: Provider.neverStub, plugins: [], authentication: auth)
}
