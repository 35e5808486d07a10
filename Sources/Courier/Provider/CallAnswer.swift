import Foundation

/// What one call's pipeline produces: a whole response (in memory or in a file), or a streamed
/// head with the body that follows it. A stream is its own value from the transport to
/// `Provider.stream`, so no ``Response`` carries a live body (issue 31).
enum CallAnswer: Sendable {
    case whole(Response)
    case streamed(StreamedResponse)

    /// What validation, retries, metrics and plugins read: the response, or a stream's head (its
    /// `data` empty unless the transport had the whole body already).
    var head: Response {
        switch self {
        case .whole(let response): response
        case .streamed(let streamed): streamed.head
        }
    }

    /// The same answer with `head` in its place (a stream keeps its body).
    func replacingHead(_ head: Response) -> CallAnswer {
        switch self {
        case .whole: .whole(head)
        case .streamed(let streamed): .streamed(StreamedResponse(head: head, body: streamed.body))
        }
    }

    /// Ends a streamed body nobody will read (a deadline passed, a redirect or a retry dropped
    /// it). Nothing to do for a whole response.
    func discard() {
        if case .streamed(let streamed) = self { streamed.body.buffer.terminate() }
    }

    /// The answer after plugins' `process`, which sees heads only. A stream keeps its body when a
    /// plugin answers with a head; a response of the plugin's own that carries data is the body
    /// then (the live one ends), as is a response that turned a failure into a success. A live
    /// body whose success a plugin turned into a failure ends.
    static func processed(
        _ processed: Result<Response, CourierError>, from answer: Result<CallAnswer, CourierError>, isStream: Bool
    ) -> Result<CallAnswer, CourierError> {
        switch processed {
        case .failure(let error):
            if case .success(let dropped) = answer { dropped.discard() }
            return .failure(error)
        case .success(let head):
            if case .success(.streamed(let streamed)) = answer {
                if head.data.isEmpty { return .success(.streamed(StreamedResponse(head: head, body: streamed.body))) }
                streamed.body.buffer.terminate()
            }
            guard isStream else { return .success(.whole(head)) }
            return .success(.streamed(StreamedResponse(head: head, body: ResponseBody(head.data))))
        }
    }
}
