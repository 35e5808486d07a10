import Foundation

/// A request described as plain values: the step between a target and a `URLRequest`.
///
/// A provider's endpoint mapping makes one from each target (by default with ``init(target:)``),
/// where you can add headers or swap the task; its request mapping then calls ``urlRequest()``.
///
/// Equality and hashing cover the URL, method, task (bodies included) and headers, not
/// ``sampleResponseClosure``.
public struct Endpoint: Sendable {
    /// The full URL: the target's base URL and path, before any parameters from the task.
    public var url: URL
    /// The HTTP method.
    public var method: HTTPMethod
    /// The body and parameters.
    public var task: HTTPTask
    /// Header fields. Names are matched without regard to case when headers are added.
    public var headers: [String: String]
    /// Produces the answer used when the request is stubbed. Called only for stubbed requests, at most
    /// once per attempt (for a delayed stub, when the delay is over).
    public var sampleResponseClosure: @Sendable () -> SampleResponse {
        get {
            switch sample {
            case .closure(let closure): closure
            case .target(let target): { target.sampleResponse }
            }
        }
        set { sample = .closure(newValue) }
    }

    /// Where the sample response comes from. The default mapping keeps the target itself rather
    /// than a closure over it (issue 29): the closure's context was a heap allocation for every
    /// request, stubbed or not, and most requests never ask for a sample.
    enum Sample: Sendable {
        case closure(@Sendable () -> SampleResponse)
        case target(any TargetType)

        /// The sample response, with no closure made for it.
        func response() -> SampleResponse {
            switch self {
            case .closure(let closure): closure()
            case .target(let target): target.sampleResponse
            }
        }
    }

    var sample: Sample

    /// Creates an endpoint.
    /// - Parameters:
    ///   - url: The full URL.
    ///   - method: The HTTP method. Default: `.get`.
    ///   - task: The body and parameters. Default: `.plain`.
    ///   - headers: Header fields. Default: none.
    ///   - sampleResponseClosure: The stubbed answer. Default: status 200 with an empty body.
    public init(
        url: URL,
        method: HTTPMethod = .get,
        task: HTTPTask = .plain,
        headers: [String: String] = [:],
        sampleResponseClosure: @escaping @Sendable () -> SampleResponse = { .networkResponse(200, Data()) }
    ) {
        self.url = url
        self.method = method
        self.task = task
        self.headers = headers
        self.sample = .closure(sampleResponseClosure)
    }

    /// Creates the default endpoint for a target: its URL (see ``TargetType/path``), method, task,
    /// headers and sample response.
    /// - Parameter target: The target.
    /// - Throws: ``CourierError/requestMapping(_:)`` when the base URL and path do not make a valid
    ///   URL.
    public init(target: some TargetType) throws(CourierError) {
        url = try URLBuilder.url(baseURL: target.baseURL, path: target.path)
        method = target.method
        task = target.task
        headers = target.headers
        sample = .target(target)
    }

    /// Returns a copy with `newHeaders` added; where a name is already present (in any case), the
    /// new value wins.
    /// - Parameter newHeaders: The headers to add.
    /// - Returns: The new endpoint.
    public func adding(headers newHeaders: [String: String]) -> Endpoint {
        var copy = self
        for (name, value) in newHeaders {
            copy.headers.setField(name, value)
        }
        return copy
    }

    /// Returns a copy with a different task.
    /// - Parameter task: The new body and parameters.
    /// - Returns: The new endpoint.
    public func replacing(task: HTTPTask) -> Endpoint {
        var copy = self
        copy.task = task
        return copy
    }
}

extension Endpoint: Hashable {
    public static func == (lhs: Endpoint, rhs: Endpoint) -> Bool {
        lhs.url == rhs.url && lhs.method == rhs.method && lhs.headers == rhs.headers
            && lhs.task == rhs.task
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(method)
        hasher.combine(headers)
        hasher.combine(task)
    }
}

extension Dictionary where Key == String, Value == String {
    /// Sets a header, replacing any field with the same name in another case.
    mutating func setField(_ name: String, _ value: String) {
        if self[name] == nil, let existing = keys.first(where: { ASCII.equalIgnoringCase($0, name) }) {
            removeValue(forKey: existing)
        }
        self[name] = value
    }
}
