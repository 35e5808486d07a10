import Foundation

/// A to-do item, as the JSON API sends it.
public struct Todo: Codable, Hashable, Sendable {
    public var id: Int
    public var title: String
    public var completed: Bool

    public init(id: Int, title: String, completed: Bool) {
        self.id = id
        self.title = title
        self.completed = completed
    }
}

/// What `POST /todos` takes.
public struct NewTodo: Codable, Hashable, Sendable {
    public var title: String
    public var completed: Bool

    public init(title: String, completed: Bool = false) {
        self.title = title
        self.completed = completed
    }
}

/// The stubbed answers both descriptions of the API use, so `swift run todo` works offline.
enum Samples {
    static let todos = [
        Todo(id: 1, title: "Describe the API as targets", completed: true),
        Todo(id: 2, title: "Stub it for tests", completed: true),
        Todo(id: 3, title: "Ship it", completed: false),
    ]

    static func json(_ value: some Encodable) -> Data {
        (try? JSONEncoder.sortedKeys().encode(value)) ?? Data()
    }
}
