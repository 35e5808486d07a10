// Testing against recorded answers: the first run records what the server said into a fixture
// (Fixtures/*.har beside this file, committed), every later run answers from it, with no network.
//
//   COURIER_REPLAY=missing swift test --package-path Examples   # records the fixtures that are missing
//   COURIER_REPLAY=record  swift test --package-path Examples   # records them all again
//
// In an app the upstream is the real server (`URLSessionTransport()`, the default) and the client
// points at it. This example has no server to record from, so it records from `TodoServer`, a
// small in-memory to-do server built on StubTransport; the workflow is the same.
import Courier
import CourierTesting
import Foundation
import Testing
import TodoAPI

@Suite struct TodoReplayTests {
    @Test func agendaAndNewItemsFromRecordedAnswers() async throws {
        let transport = ReplayTransport("agenda", upstream: TodoServer().transport)
        let client = TodoClient(transport: transport)

        let agenda = try await client.agenda()
        #expect(agenda.map(\.title) == ["Write the tests", "Describe the API", "Record the answers"])
        let created = try await client.add("Replay them")
        #expect(created == Todo(id: 4, title: "Replay them", completed: false))
        #expect(try await client.todo(id: 42) == nil)
    }
}

/// An in-memory to-do server: what the fixture was recorded from.
struct TodoServer {
    let transport = StubTransport()

    init() {
        let todos = [
            Todo(id: 1, title: "Describe the API", completed: true),
            Todo(id: 2, title: "Record the answers", completed: true),
            Todo(id: 3, title: "Write the tests", completed: false),
        ]
        transport
            .on(.get, "todos", .json(todos))
            .on(.get, "todos/*", .status(404))
            .on(
                .post, "todos",
                .handler { request in
                    let new = try JSONDecoder().decode(NewTodo.self, from: request.httpBody ?? Data())
                    let created = Todo(id: todos.count + 1, title: new.title, completed: new.completed)
                    let body = try JSONEncoder.sortedKeys().encode(created)
                    let head = HTTPURLResponse(
                        url: request.url!, statusCode: 201, httpVersion: "HTTP/1.1",
                        headerFields: ["Content-Type": "application/json"])
                    return Response(statusCode: 201, data: body, request: request, response: head)
                })
    }
}
