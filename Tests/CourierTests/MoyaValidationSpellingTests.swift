import Courier
import Foundation
import Testing

/// Moya's `validationType` spelling is honoured, so a migrated target does not silently stop
/// validating.
@Suite struct MoyaValidationSpellingTests {
    /// Declared the way Moya targets are.
    enum MoyaStyle: TargetType {
        var headers: [String: String] { [:] }
        case item
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "items/1" }
        var validationType: ValidationType { .successCodes }
        var sampleResponse: SampleResponse { .networkResponse(500, Data("oops".utf8)) }
    }

    /// Both spellings: Courier's wins.
    enum Both: TargetType {
        var headers: [String: String] { [:] }
        case item
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "items/1" }
        var validation: ValidationType { .none }
        var validationType: ValidationType { .successCodes }
        var sampleResponse: SampleResponse { .networkResponse(500, Data("oops".utf8)) }
    }

    @Test func aMoyaStyleValidationTypeRefusesA500() async {
        #expect(MoyaStyle.item.validation == .successCodes)
        await #expect {
            try await Provider<MoyaStyle>(stubClosure: Provider.immediatelyStub).request(.item)
        } throws: { error in
            guard case CourierError.statusCode(let response) = error else { return false }
            return response.statusCode == 500
        }
        // Through MultiTarget too.
        await #expect(throws: CourierError.self) {
            try await Provider<MultiTarget>(stubClosure: Provider.immediatelyStub).request(MultiTarget(MoyaStyle.item))
        }
    }

    @Test func validationWinsWhenBothAreDeclared() async throws {
        let response = try await Provider<Both>(stubClosure: Provider.immediatelyStub).request(.item)
        #expect(response.statusCode == 500)
    }
}
