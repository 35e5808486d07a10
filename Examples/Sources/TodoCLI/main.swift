// swift run --package-path Examples todo list
// swift run --package-path Examples todo fetch 2
// swift run --package-path Examples todo post "Buy milk"
// …with --base-url URL to talk to a real JSON API (e.g. a jsonplaceholder-style /todos server).
import Courier
import Foundation
import TodoAPI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

var arguments = Array(CommandLine.arguments.dropFirst())
var baseURL: URL?
if let index = arguments.firstIndex(of: "--base-url"), index + 1 < arguments.count {
    baseURL = URL(string: arguments[index + 1])
    arguments.removeSubrange(index...(index + 1))
}

let client =
    baseURL.map { TodoClient(baseURL: $0, transport: URLSessionTransport()) }
    ?? TodoClient(transport: nil)

func line(_ todo: Todo) -> String { "\(todo.completed ? "[x]" : "[ ]") #\(todo.id) \(todo.title)" }

do {
    switch (arguments.first, arguments.dropFirst().first) {
    case ("list", _):
        for todo in try await client.agenda() { print(line(todo)) }
    case ("fetch", let id?):
        guard let number = Int(id) else { throw CourierError.requestMapping("'\(id)' is not a number") }
        print(try await client.todo(id: number).map(line) ?? "no to-do #\(number)")
    case ("post", let title?):
        print("created", line(try await client.add(title)))
    default:
        print("usage: todo list | fetch ID | post TITLE [--base-url URL]")
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("todo: \(error.localizedDescription)\n".utf8))
    exit(1)
}
