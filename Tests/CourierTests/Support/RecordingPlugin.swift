import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Records every hook call, tagged with the plugin's name, into a shared log.
final class EventLog: Sendable {
    private let events = Locked<[String]>([])

    func append(_ event: String) { events.withLock { $0.append(event) } }
    var all: [String] { events.withLock { $0 } }
}

struct RecordingPlugin: Plugin {
    let name: String
    let log: EventLog
    var headerToAdd: (String, String)?
    var transform: (@Sendable (Result<Response, CourierError>) -> Result<Response, CourierError>)?

    init(
        _ name: String, log: EventLog, headerToAdd: (String, String)? = nil,
        transform: (@Sendable (Result<Response, CourierError>) -> Result<Response, CourierError>)? = nil
    ) {
        self.name = name
        self.log = log
        self.headerToAdd = headerToAdd
        self.transform = transform
    }

    func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
        log.append("\(name).prepare")
        var request = request
        if let (field, value) = headerToAdd {
            let previous = request.value(forHTTPHeaderField: field).map { $0 + "," } ?? ""
            request.setValue(previous + value, forHTTPHeaderField: field)
        }
        return request
    }

    func willSend(_ request: URLRequest, context: RequestContext) async {
        log.append("\(name).willSend")
    }

    func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {
        log.append("\(name).didReceive(\(Self.describe(result)))")
    }

    func process(
        _ result: Result<Response, CourierError>, context: RequestContext
    ) async
        -> Result<Response, CourierError>
    {
        log.append("\(name).process(\(Self.describe(result)))")
        return transform?(result) ?? result
    }

    static func describe(_ result: Result<Response, CourierError>) -> String {
        switch result {
        case .success(let response): "\(response.statusCode)"
        case .failure(let error):
            switch error {
            case .cancelled: "cancelled"
            case .statusCode(let response): "statusCode \(response.statusCode)"
            case .requestMapping: "requestMapping"
            case .timedOut: "timedOut"
            default: "error"
            }
        }
    }
}
