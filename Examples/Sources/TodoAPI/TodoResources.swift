import Courier
import Foundation

// The same API as a struct per resource: each call is its own type, holding only what it needs.
// Good for large APIs that grow in several places. One `Provider<MultiTarget>` serves them all.

/// `GET /todos`.
public struct TodoList: TargetType {
    public var headers: [String: String] { [:] }
    public var baseURL: URL
    public var path: String { "todos" }
    public var validation: ValidationType { .successCodes }
    public var sampleData: Data { Samples.json(Samples.todos) }

    public init(baseURL: URL = TodoAPI.defaultBaseURL) { self.baseURL = baseURL }
}

/// `GET /todos/{id}`.
public struct TodoByID: TargetType {
    public var headers: [String: String] { [:] }
    public var baseURL: URL
    public var id: Int
    public var path: String { "todos/\(id)" }
    public var validation: ValidationType { .successCodes }
    public var sampleResponse: SampleResponse { TodoAPI.fetch(id: id).sampleResponse }

    public init(id: Int, baseURL: URL = TodoAPI.defaultBaseURL) {
        self.id = id
        self.baseURL = baseURL
    }
}

/// `POST /todos`.
public struct CreateTodo: TargetType {
    public var headers: [String: String] { [:] }
    public var baseURL: URL
    public var todo: NewTodo
    public var path: String { "todos" }
    public var method: HTTPMethod { .post }
    public var task: HTTPTask { .json(todo) }
    public var validation: ValidationType { .successCodes }
    public var sampleResponse: SampleResponse { TodoAPI.create(todo).sampleResponse }

    public init(_ todo: NewTodo, baseURL: URL = TodoAPI.defaultBaseURL) {
        self.todo = todo
        self.baseURL = baseURL
    }
}
