import Courier
import Foundation
import Testing

@Suite struct ValidationTests {
    @Test(arguments: [
        (ValidationType.none, 100, true), (.none, 599, true), (.none, 404, true),
        (.successCodes, 199, false), (.successCodes, 200, true), (.successCodes, 299, true),
        (.successCodes, 300, false), (.successAndRedirectCodes, 199, false),
        (.successAndRedirectCodes, 200, true), (.successAndRedirectCodes, 399, true),
        (.successAndRedirectCodes, 400, false), (.customCodes([201, 418]), 201, true),
        (.customCodes([201, 418]), 418, true), (.customCodes([201, 418]), 200, false),
        (.customCodes([]), 200, false),
    ])
    func boundaries(validation: ValidationType, code: Int, accepted: Bool) {
        #expect(validation.accepts(code) == accepted)
    }

    @Test(arguments: [(200, true), (299, true), (300, false), (404, false), (500, false)])
    func stubbedResponsesAreValidatedWithTheResponseAttached(code: Int, accepted: Bool) async {
        let provider = Provider<TestAPI>(stubClosure: Provider.immediatelyStub)
        do {
            let response = try await provider.request(.validated(code, .successCodes))
            #expect(accepted)
            #expect(response.statusCode == code)
        } catch {
            #expect(!accepted)
            guard case .statusCode(let response) = error else {
                Issue.record("expected statusCode, got \(error)")
                return
            }
            #expect(response.statusCode == code)
            #expect(error.response?.data == Data("sample".utf8))
        }
    }

    @Test func realResponsesAreValidatedToo() async {
        let transport = RecordingTransport(statusCode: 503, data: Data("down".utf8))
        let provider = Provider<TestAPI>(transport: transport)
        await #expect {
            try await provider.request(.validated(503, .successAndRedirectCodes))
        } throws: { error in
            (error as? CourierError)?.response?.statusCode == 503
        }
        let response = try? await provider.request(.validated(503, .none))
        #expect(response?.statusCode == 503)
    }
}
