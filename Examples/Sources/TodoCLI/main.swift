// swift run --package-path Examples todo list
// swift run --package-path Examples todo fetch 2
// swift run --package-path Examples todo post "Buy milk"
// …with --base-url URL to talk to a real JSON API (e.g. a jsonplaceholder-style /todos server).
// Ctrl-C cancels the request in flight.
import Courier
import ExampleSupport
import Foundation
import TodoAPI

let usage = "usage: todo list | fetch ID | post TITLE [--base-url URL]"

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("todo: \(message)\n".utf8))
    exit(status)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var baseURL: URL?
if let index = arguments.firstIndex(of: "--base-url") {
    guard index + 1 < arguments.count, let url = URL(string: arguments[index + 1]), url.host != nil else {
        fail("--base-url needs an http(s) URL\n\(usage)", status: 2)
    }
    baseURL = url
    arguments.removeSubrange(index...(index + 1))
}

// The command's own arguments are checked here, before any request is built.
enum Command {
    case list
    case fetch(Int)
    case post(String)
}

let command: Command
switch (arguments.first, arguments.dropFirst().first) {
case ("list", _):
    command = .list
case ("fetch", let id?):
    guard let number = Int(id) else { fail("'\(id)' is not a to-do number\n\(usage)", status: 2) }
    command = .fetch(number)
case ("post", let title?):
    guard !title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
        fail("a to-do needs a title\n\(usage)", status: 2)
    }
    command = .post(title)
default:
    fail(usage, status: 2)
}

if baseURL == nil {
    FileHandle.standardError.write(
        Data("todo: offline, answering from built-in stubs (--base-url URL for a real server)\n".utf8))
}
let client =
    baseURL.map { TodoClient(baseURL: $0, transport: URLSessionTransport()) }
    ?? TodoClient(transport: nil)

func line(_ todo: Todo) -> String { "\(todo.completed ? "[x]" : "[ ]") #\(todo.id) \(todo.title)" }

let status = await exitStatus(cancellingOnInterrupt: {
    do throws(CourierError) {
        switch command {
        case .list:
            for todo in try await client.agenda() { print(line(todo)) }
        case .fetch(let number):
            print(try await client.todo(id: number).map(line) ?? "no to-do #\(number)")
        case .post(let title):
            print("created", line(try await client.add(title)))
        }
        return 0
    } catch {
        FileHandle.standardError.write(
            Data("todo: \(error.isCancellation ? "cancelled" : error.localizedDescription)\n".utf8))
        return 1
    }
})
exit(status)
