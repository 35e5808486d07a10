import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Against a real httpbin on 127.0.0.1, started by `scripts/test`.
@Suite(.enabled(if: HTTPBin.isAvailable, "needs COURIER_HTTPBIN_URL (run scripts/test)"), .timeLimit(.minutes(2)))
struct IntegrationTests {
    let provider = Provider<Bin>()

    @Test func getWithQueryParameters() async throws {
        let target = Bin(
            path: "get",
            task: .parameters(["q": "swift & more", "page": 2, "tags": ["a", "b"], "on": true], encoding: .url))
        let echo = try await provider.request(target).map(Echo.self)
        #expect(echo.args["q"] == .one("swift & more"))
        #expect(echo.args["page"] == .one("2"))
        #expect(echo.args["tags[]"] == .many(["a", "b"]))
        #expect(echo.args["on"] == .one("1"))
    }

    @Test func pathWithQueryIsSentAsAQuery() async throws {
        let echo = try await provider.request(Bin(path: "anything/search?term=a%20b&x=1")).map(Echo.self)
        #expect(echo.args["term"] == .one("a b"))
        #expect(echo.args["x"] == .one("1"))
        #expect(echo.url.hasSuffix("/anything/search?term=a%20b&x=1"))
    }

    @Test func postEncodableJSON() async throws {
        let target = Bin(path: "anything", method: .post, task: .json(Item(id: 3, name: "three")))
        let echo = try await provider.request(target).map(Echo.self)
        #expect(echo.method == "POST")
        #expect(echo.json == .object(["id": .number(3), "name": .string("three")]))
        #expect(echo.headers["Content-Type"] == "application/json")
    }

    @Test func postJSONParameters() async throws {
        let target = Bin(
            path: "anything", method: .post,
            task: .parameters(["user": ["name": "ada", "langs": ["swift"]], "admin": false], encoding: .json))
        let echo = try await provider.request(target).map(Echo.self)
        #expect(
            echo.json
                == .object([
                    "admin": .bool(false),
                    "user": .object(["name": .string("ada"), "langs": .array([.string("swift")])]),
                ]))
    }

    @Test func postForm() async throws {
        let target = Bin(path: "anything", method: .post, task: .parameters(["name": "A d/a", "n": 1], encoding: .url))
        let echo = try await provider.request(target).map(Echo.self)
        #expect(echo.form?["name"] == .one("A d/a"))
        #expect(echo.form?["n"] == .one("1"))
        #expect(echo.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func compositeParametersAndData() async throws {
        let composite = Bin(
            path: "anything", method: .put,
            task: .compositeParameters(bodyParameters: ["b": "body"], bodyEncoding: .json, urlParameters: ["u": "url"]))
        let echo = try await provider.request(composite).map(Echo.self)
        #expect(echo.args["u"] == .one("url"))
        #expect(echo.json == .object(["b": .string("body")]))

        let data = Bin(
            path: "anything", method: .post, task: .compositeData(Data("raw bytes".utf8), urlParameters: ["v": 1]),
            headers: ["Content-Type": "text/plain"])
        let dataEcho = try await provider.request(data).map(Echo.self)
        #expect(dataEcho.args["v"] == .one("1"))
        #expect(dataEcho.data == "raw bytes")
    }

    @Test func headersAreSent() async throws {
        let target = Bin(path: "headers", headers: ["X-Courier-Test": "yes", "Accept": "application/json"])
        let headers = try await provider.request(target).map([String: String].self, atKeyPath: "headers")
        #expect(headers["X-Courier-Test"] == "yes")
        #expect(headers["Accept"] == "application/json")
    }

    @Test(arguments: [
        (200, ValidationType.none, true), (404, .none, true), (503, .none, true),
        (200, .successCodes, true), (204, .successCodes, true), (300, .successCodes, false),
        (404, .successCodes, false), (304, .successAndRedirectCodes, true), (400, .successAndRedirectCodes, false),
        (418, .customCodes([418]), true), (200, .customCodes([418]), false),
    ])
    func statusCodesWithValidation(code: Int, validation: ValidationType, accepted: Bool) async {
        // 301/302/303/307 would be followed to a 200; 300 and 304 carry no Location.
        let target = Bin(path: "status/\(code)", validation: validation)
        let result: Result<Response, CourierError>
        do { result = .success(try await provider.request(target)) } catch { result = .failure(error) }
        switch result {
        case .success(let response):
            #expect(accepted)
            #expect(response.statusCode == code)
        case .failure(let error):
            #expect(!accepted)
            guard case .statusCode(let response) = error else {
                Issue.record("expected statusCode, got \(error)")
                return
            }
            #expect(response.statusCode == code)
        }
    }

    /// FoundationNetworking hangs forever on a 401 with `WWW-Authenticate: Basic` and no credential;
    /// Courier returns the 401 (a total deadline guards the test from hanging). The deadline is
    /// generous: the challenge is answered on FoundationNetworking's one work queue, which the
    /// HTTPS suites' TLS handshakes keep busy for seconds under the sanitizers (10 s ran out once).
    @Test func basicAuthChallengeWithoutCredentialReturns401() async throws {
        let response = try await provider.request(Bin(path: "basic-auth/user/passwd", timeout: .seconds(30)))
        #expect(response.statusCode == 401)
        #expect(response.value(forHTTPHeaderField: "WWW-Authenticate")?.hasPrefix("Basic") == true)

        let validated = Bin(path: "status/401", validation: .successCodes, timeout: .seconds(30))
        await #expect {
            try await provider.request(validated)
        } throws: { error in
            (error as? CourierError)?.response?.statusCode == 401
        }
    }

    @Test func basicAuthWithCredentialsInHeaderSucceeds() async throws {
        let token = Data("user:passwd".utf8).base64EncodedString()
        let target = Bin(path: "basic-auth/user/passwd", headers: ["Authorization": "Basic \(token)"])
        let response = try await provider.request(target)
        #expect(response.statusCode == 200)
        #expect(try response.map(Bool.self, atKeyPath: "authenticated"))
    }

    @Test func redirectsAreFollowed() async throws {
        let response = try await provider.request(Bin(path: "redirect/2", validation: .successCodes))
        #expect(response.statusCode == 200)
        #expect(response.response?.url?.path == "/get")
    }

    @Test func gzipBodiesAreDecoded() async throws {
        let response = try await provider.request(Bin(path: "gzip"))
        #expect(try response.map(Bool.self, atKeyPath: "gzipped"))
    }

    @Test func slowResponseBeyondTheDeadlineTimesOut() async {
        // Had the deadline not fired, the server would have answered 200 after 60 s (httpbin's
        // `/delay` stops at 10 s, short of a stall a loaded machine can give this task): the error
        // itself shows the deadline ended the request (no wall-clock assertion needed).
        await #expect {
            try await provider.request(Bin(path: "drip?delay=60&duration=1&numbytes=1", timeout: .milliseconds(300)))
        } throws: { error in
            guard case CourierError.timedOut(let limit) = error else { return false }
            return limit == .milliseconds(300)
        }
    }

    @Test func connectionRefusedIsATypedError() async throws {
        let port = try ClosedPort.find()
        struct Refused: TargetType {
            var headers: [String: String] { [:] }
            let port: Int
            var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
            var path: String { "get" }
        }
        await #expect {
            try await Provider<Refused>().request(Refused(port: port))
        } throws: { error in
            guard case CourierError.underlying(let underlying, nil) = error else { return false }
            return (underlying as? URLError)?.code == .cannotConnectToHost
        }
    }

    @Test func concurrentRealRequests() async throws {
        try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<32 {
                group.addTask {
                    let echo = try await provider.request(
                        Bin(path: "get", task: .parameters(["i": .int(index)], encoding: .url))
                    ).map(Echo.self)
                    guard case .one(let value)? = echo.args["i"] else { return nil }
                    return value
                }
            }
            var seen = Set<String>()
            for try await value in group {
                seen.insert(try #require(value))
            }
            #expect(seen == Set((0..<32).map(String.init)))
        }
    }
}

/// A loopback port with nothing listening: bound, then released.
enum ClosedPort {
    struct Failed: Error {}

    static func find() throws -> Int {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failed() }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw Failed() }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
