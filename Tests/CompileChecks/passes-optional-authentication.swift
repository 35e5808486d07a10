// An optional authentication, as the earlier `Provider(authentication:)` took: no force unwrap is
// needed, and `nil` sends requests unsigned.
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
    func apply(_ credential: String, to request: inout URLRequest) {
        request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
    }
    func refresh(_ credential: String) async throws -> String { credential }
}

func make(savedToken: String?) {
    let auth = savedToken.map { Authentication(Token(), credential: $0) }
    _ = Provider<API>(authentication: auth)
    _ = Provider<API>(stubClosure: Provider.immediatelyStub, authentication: auth)
    _ = Provider<API>(authentication: Authentication(Token(), credential: "t"))
}
