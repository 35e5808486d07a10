import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Plugins, retries and cURL rendering against the local httpbin.
@Suite(.enabled(if: HTTPBin.isAvailable, "needs COURIER_HTTPBIN_URL (run scripts/test)"), .timeLimit(.minutes(2)))
struct IntegrationPolicyTests {
    struct Bearer: AccessTokenAuthorizable {
        var headers: [String: String] { [:] }
        var baseURL: URL { HTTPBin.baseURL ?? URL(string: "http://127.0.0.1:9")! }
        var path: String { "bearer" }
        var authorizationType: AuthorizationType? { .bearer }
    }

    @Test func basicAuthWithAndWithoutCredentials() async throws {
        // A hang (the Linux challenge bug) would last forever; 60 s only bounds it, generously
        // enough for a loaded machine under ThreadSanitizer.
        let target = Bin(path: "basic-auth/ada/l0velace", timeout: .seconds(60))
        let withCredentials = Provider<Bin>(plugins: [.credentials { _ in ("ada", "l0velace") }])
        #expect(try await withCredentials.request(target).statusCode == 200)
        let wrong = Provider<Bin>(plugins: [.credentials { _ in ("ada", "nope") }])
        #expect(try await wrong.request(target).statusCode == 401)
        #expect(try await Provider<Bin>().request(target).statusCode == 401)
    }

    @Test func bearerWithTheAccessTokenPlugin() async throws {
        let provider = Provider<Bearer>(plugins: [.accessToken { _ in "abc123" }])
        let response = try await provider.request(Bearer())
        #expect(response.statusCode == 200)
        #expect(try response.map(String.self, atKeyPath: "token") == "abc123")
        #expect(try await Provider<Bearer>().request(Bearer()).statusCode == 401)
    }

    @Test func unavailableIsRetriedThenFailsWithTheAttemptCount() async {
        let log = EventLog()
        struct Attempts: Plugin {
            let log: EventLog
            func willSend(_ request: URLRequest, context: RequestContext) async { log.append("send") }
        }
        let provider = Provider<Bin>(
            plugins: [Attempts(log: log)],
            retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10), jitter: .none))
        await #expect {
            try await provider.request(Bin(path: "status/503", validation: .successCodes))
        } throws: { error in
            guard case CourierError.retryLimitReached(3, let last) = error else { return false }
            return last.response?.statusCode == 503
        }
        #expect(log.all.count == 3)
    }

    // Process (running the logged command) exists on macOS and Linux only; iOS, tvOS and watchOS
    // test builds compile without this test.
    #if os(macOS) || os(Linux)
        @Test func loggedCURLCommandRuns() async throws {
            let log = EventLog()
            let provider = Provider<Bin>(plugins: [.logger([.cURL], output: { log.append($0) })])
            let target = Bin(
                path: "anything/curl", method: .post, task: .data(Data(#"{"it's":"quoted"}"#.utf8)),
                headers: ["Content-Type": "application/json", "X-Courier": "a b"])
            _ = try await provider.request(target)
            let command = try #require(log.all.first)
            // curl is waited for off the cooperative pool (a blocked pool thread stalls other tests).
            let (status, output) = try await offThePool {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/bin/sh")
                process.arguments = ["-c", command + " --silent --max-time 60"]
                let pipe = Pipe()
                process.standardOutput = pipe
                try process.run()
                let output = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                return (process.terminationStatus, output)
            }
            #expect(status == 0)
            let echo = try JSONDecoder().decode(Echo.self, from: output)
            #expect(echo.method == "POST")
            #expect(echo.data == #"{"it's":"quoted"}"#)
            #expect(echo.headers["X-Courier"] == "a b")
        }
    #endif
}
