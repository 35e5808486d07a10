// How to test your own code that uses Courier: give it a StubTransport, declare the answers,
// check what it did. No server, no sleeps, and every test has its own stubs, so they run in parallel.
import Courier
import CourierTesting
import Foundation
import Testing
import TodoAPI

@Suite struct TodoClientTests {
    let transport = StubTransport()
    var client: TodoClient { TodoClient(transport: transport) }

    @Test func agendaPutsOpenItemsFirst() async throws {
        transport.on(
            .get, "todos",
            .json([
                Todo(id: 1, title: "done", completed: true),
                Todo(id: 2, title: "open", completed: false),
            ]))
        let agenda = try await client.agenda()
        #expect(agenda.map(\.id) == [2, 1])
    }

    @Test func missingItemIsNil() async throws {
        transport.on(.get, "todos/*", .status(404))
        #expect(try await client.todo(id: 99) == nil)
    }

    @Test func addTrimsTheTitleAndPostsJSON() async throws {
        transport.on(.post, "todos", .json(Todo(id: 7, title: "Buy milk", completed: false), status: 201))
        let created = try await client.add("  Buy milk \n")
        #expect(created.id == 7)
        let sent = try #require(transport.requests.last)
        #expect(sent.request.httpMethod == "POST")
        #expect(try JSONDecoder().decode(NewTodo.self, from: #require(sent.body)) == NewTodo(title: "Buy milk"))
    }

    @Test func emptyTitleNeverReachesTheServer() async {
        await #expect(throws: CourierError.self) { try await client.add("   ") }
        #expect(transport.requests.isEmpty)
    }

    @Test func aFlakyServerIsOneLine() async throws {
        // 503 on the first call, the list from then on: the client surfaces the failure, then recovers.
        let list = transport.route(
            .get, "todos", .sequence([.status(503), .json([Todo(id: 1, title: "a", completed: false)])]))
        await #expect(throws: CourierError.self) { try await client.agenda() }
        #expect(try await client.agenda().map(\.id) == [1])
        transport.verify(list, times: 2)
    }

    @Test func onlyTheRequestsExpectedAreSent() async throws {
        transport.on(.get, "todos", .json([Todo]()))
        transport.on(.post, "todos", .json(Todo(id: 1, title: "Milk", completed: false), status: 201).once())
        _ = try await client.add("Milk")
        _ = try await client.agenda()
        transport.verifyOrder([.method(.post) && .jsonBody(NewTodo(title: "Milk")), .method(.get)])
        transport.verifyAllRoutesUsed()
    }

    @Test func serverErrorsSurface() async {
        transport.on(.get, "todos", .status(503))
        await #expect {
            try await client.agenda()
        } throws: { error in
            (error as? CourierError)?.response?.statusCode == 503
        }
    }
}
