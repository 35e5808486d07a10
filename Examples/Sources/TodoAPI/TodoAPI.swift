import Courier
import Foundation

/// The to-do API as one enum: a case per call. Good for small APIs whose calls belong together.
public enum TodoAPI: TargetType {
    public var headers: [String: String] { [:] }
    case list
    case fetch(id: Int)
    case create(NewTodo)

    /// Where the API lives; set from `--base-url`, or the stubbed default.
    public static let defaultBaseURL = URL(string: "https://todos.example.com")!

    public var baseURL: URL { Self.defaultBaseURL }

    public var path: String {
        switch self {
        case .list, .create: "todos"
        case .fetch(let id): "todos/\(id)"
        }
    }

    public var method: HTTPMethod {
        switch self {
        case .create: .post
        default: .get
        }
    }

    public var task: HTTPTask {
        switch self {
        case .create(let todo): .json(todo)
        default: .plain
        }
    }

    public var validation: ValidationType { .successCodes }

    public var sampleResponse: SampleResponse {
        switch self {
        case .list:
            .networkResponse(200, Samples.json(Samples.todos))
        case .fetch(let id):
            Samples.todos.first { $0.id == id }.map { .networkResponse(200, Samples.json($0)) }
                ?? .networkResponse(404, Data(#"{"error":"not found"}"#.utf8))
        case .create(let new):
            .networkResponse(201, Samples.json(Todo(id: 4, title: new.title, completed: new.completed)))
        }
    }
}
