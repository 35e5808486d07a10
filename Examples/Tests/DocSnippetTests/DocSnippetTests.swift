// The README's and DocC's test samples, as written there.
import Courier
import CourierTesting
import Foundation
import Testing
import TodoAPI

@testable import DocSnippets

@Test func showsTheUser() async throws {
    let provider = Provider<GitHub>(stubClosure: Provider.immediatelyStub)
    let user = try await provider.request(.user("ada")).map(User.self)
    #expect(user.login == "ada")
}

@Test func agendaPutsOpenItemsFirst() async throws {
    let transport = StubTransport().on(.get, "todos", .json([Todo(id: 1, title: "a", completed: true)]))
    let client = TodoClient(transport: transport)
    #expect(try await client.agenda().map(\.id) == [1])
    #expect(transport.requests.count == 1)
}

@Test func recoversFromAFlakyServer() async throws {
    let transport = StubTransport()
    let list = transport.route(.get, "todos", .sequence([.status(503), .json([Todo]())]))
    let client = TodoClient(transport: transport)
    await #expect(throws: CourierError.self) { try await client.agenda() }
    #expect(try await client.agenda().isEmpty)
    transport.verify(list, times: 2)
}

// Compiled, not run: its fixture lives beside the TodoAPITests (see TodoReplayTests).
func agendaFromRecordedAnswers() async throws {
    // Fixtures/agenda.har beside this file; COURIER_REPLAY=missing swift test records it.
    let client = TodoClient(transport: ReplayTransport("agenda"))
    #expect(try await client.agenda().count == 3)
}

// The Plugins article's redaction sample: one policy for the logger (and replay fixtures).
@Test func redactionPolicySample() {
    var policy = RedactionPolicy.default
    policy.headers.insert("X-Tenant")
    policy.bodyFields.insert("ssn")
    policy.queryItems.remove("code")
    let logger: NetworkLoggerPlugin = .logger(.verbose, redaction: policy)
    #expect(logger.configuration.redaction.isSecretHeader("x_tenant"))
    #expect(
        String(decoding: policy.body(Data(#"{"ssn":"1"}"#.utf8), contentType: nil), as: UTF8.self)
            == #"{"ssn":"<redacted>"}"#)
}
