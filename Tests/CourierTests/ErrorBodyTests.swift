import Courier
import CourierTesting
import Foundation
import Testing

/// API error bodies: a refused response whose body decodes arrives as `apiError` with the decoded
/// value; otherwise as the plain `statusCode`, the body whole.
@Suite struct ErrorBodyTests {
    struct ValidationProblem: Decodable, Error, Sendable, Equatable {
        var message: String
        var fields: [String]?
    }

    struct OtherProblem: Decodable, Error, Sendable {
        var code: Int
    }

    struct API: TargetType {
        var status: Int
        var body: String
        var ownErrorBody: ErrorBody?
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "items" }
        var headers: [String: String] { [:] }
        var validation: ValidationType { .successCodes }
        var errorBody: ErrorBody? { ownErrorBody }
        var sampleResponse: SampleResponse { .networkResponse(status, Data(body.utf8)) }
    }

    static let provider = Provider<API>(stubClosure: Provider.immediatelyStub, errorBody: .json(ValidationProblem.self))

    @Test(arguments: [400, 422, 500])
    func aDecodableErrorBodyArrivesDecoded(status: Int) async {
        let body = #"{"message":"title is missing","fields":["title"]}"#
        do throws(CourierError) {
            _ = try await Self.provider.request(API(status: status, body: body))
            Issue.record("a \(status) must throw")
        } catch {
            guard case .apiError(let value, let response) = error else {
                Issue.record("expected apiError, got \(error)")
                return
            }
            #expect(value as? ValidationProblem == ValidationProblem(message: "title is missing", fields: ["title"]))
            #expect(response.statusCode == status)
            #expect(response.data == Data(body.utf8), "the body is kept whole")
            #expect(error.apiError(as: ValidationProblem.self)?.message == "title is missing")
            #expect(error.apiError(as: OtherProblem.self) == nil)
            #expect(error.response?.statusCode == status)
            #expect((error.underlyingError as? ValidationProblem)?.fields == ["title"])
            #expect(error.localizedDescription.contains("\(status)"))
        }
    }

    @Test(arguments: [400, 422, 500])
    func withoutABodyOrWithOneThatDoesNotDecodeItIsTheStatusError(status: Int) async {
        for body in ["", "<html>Bad Gateway</html>", #"{"unexpected":true}"#] {
            do throws(CourierError) {
                _ = try await Self.provider.request(API(status: status, body: body))
                Issue.record("a \(status) must throw")
            } catch {
                guard case .statusCode(let response) = error else {
                    Issue.record("expected statusCode for \(body.debugDescription), got \(error)")
                    continue
                }
                #expect(response.data == Data(body.utf8))
                #expect(error.apiError(as: ValidationProblem.self) == nil)
            }
        }
    }

    @Test func aTargetsOwnErrorBodyWinsOverTheProviders() async {
        let target = API(status: 409, body: #"{"code":7}"#, ownErrorBody: .json(OtherProblem.self))
        await #expect {
            try await Self.provider.request(target)
        } throws: { error in
            (error as? CourierError)?.apiError(as: OtherProblem.self)?.code == 7
        }
    }

    @Test func withoutAnErrorBodyNothingIsDecoded() async {
        let plain = Provider<API>(stubClosure: Provider.immediatelyStub)
        await #expect {
            try await plain.request(API(status: 422, body: #"{"message":"m"}"#))
        } throws: { error in
            guard case CourierError.statusCode = error else { return false }
            return true
        }
    }

    @Test func successfulResponsesAreNeverDecodedAsErrors() async throws {
        let response = try await Self.provider.request(API(status: 200, body: #"{"message":"fine"}"#))
        #expect(response.statusCode == 200)
    }

    @Test func retriesSeeTheStatusAndTheLastAttemptIsDecoded() async {
        let transport = StubTransport().on(nil, "items", .data(Data(#"{"message":"busy"}"#.utf8), status: 503))
        let provider = Provider<API>(
            transport: transport, retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .zero, jitter: .none),
            errorBody: .json(ValidationProblem.self))
        do throws(CourierError) {
            _ = try await provider.request(API(status: 0, body: ""))
            Issue.record("must throw")
        } catch {
            guard case .retryLimitReached(let attempts, .apiError(let value, let response)) = error else {
                Issue.record("expected retryLimitReached with apiError, got \(error)")
                return
            }
            #expect(attempts == 3, "a 503 with an error body is retried like any 503")
            #expect((value as? ValidationProblem)?.message == "busy")
            #expect(response.statusCode == 503)
            #expect(error.apiError(as: ValidationProblem.self)?.message == "busy")
        }
        #expect(transport.requests.count == 3)
    }

    @Test func bridgesToNSErrorWithTheDecodedErrorUnderneath() async {
        do throws(CourierError) {
            _ = try await Self.provider.request(API(status: 422, body: #"{"message":"m"}"#))
        } catch {
            let bridged = error as NSError
            #expect(bridged.code == 18)
            #expect(bridged.userInfo[NSUnderlyingErrorKey] != nil)
        }
    }

    @Test func aRefusedStreamCarriesTheDecodedErrorToo() async {
        struct Feed: TargetType {
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "feed" }
            var headers: [String: String] { [:] }
            var validation: ValidationType { .successCodes }
            var sampleResponse: SampleResponse {
                .stream(statusCode: 429, chunks: [Data(#"{"message":"#.utf8), Data(#""slow down"}"#.utf8)])
            }
        }
        let provider = Provider<Feed>(stubClosure: Provider.immediatelyStub, errorBody: .json(ValidationProblem.self))
        do throws(CourierError) {
            _ = try await provider.stream(Feed())
            Issue.record("a 429 must throw before the body")
        } catch {
            #expect(error.apiError(as: ValidationProblem.self)?.message == "slow down")
            #expect(error.response?.statusCode == 429)
        }
    }
}
