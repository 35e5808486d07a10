import Courier
import Foundation

/// App code that uses Courier: what you would test with CourierTesting.
public struct TodoClient: Sendable {
    private let provider: Provider<MultiTarget>
    private let baseURL: URL

    /// - Parameters:
    ///   - baseURL: The server. Default: the example host (answered by stubs).
    ///   - transport: Where requests go. `nil` answers every request from its sample response.
    public init(baseURL: URL = TodoAPI.defaultBaseURL, transport: (any Transport)?) {
        self.baseURL = baseURL
        if let transport {
            provider = Provider(transport: transport, timeout: .seconds(15))
        } else {
            provider = Provider(stubClosure: Provider.immediatelyStub)
        }
    }

    /// Open items first, then by id.
    public func agenda() async throws(CourierError) -> [Todo] {
        let todos = try await provider.request(MultiTarget(TodoList(baseURL: baseURL))).map([Todo].self)
        return todos.sorted { ($0.completed ? 1 : 0, $0.id) < ($1.completed ? 1 : 0, $1.id) }
    }

    /// One item, or `nil` when the server says it does not exist.
    public func todo(id: Int) async throws(CourierError) -> Todo? {
        do {
            return try await provider.request(MultiTarget(TodoByID(id: id, baseURL: baseURL))).map(Todo.self)
        } catch  where error.response?.statusCode == 404 {
            return nil
        }
    }

    /// Creates an item; the title is trimmed and must not be empty.
    public func add(_ title: String) async throws(CourierError) -> Todo {
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw .invalidUse("a to-do needs a title") }
        return try await provider.request(MultiTarget(CreateTodo(NewTodo(title: trimmed), baseURL: baseURL)))
            .map(Todo.self)
    }
}
