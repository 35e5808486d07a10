import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Synchronization)
    import Synchronization
#endif

/// An HTTP response: status, body, and the request and `HTTPURLResponse` behind it.
public struct Response: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The fields, in one immutable object: a response is passed through every plugin and handed
    /// to every de-duplicated caller, and copying one reference is cheaper than copying five fields.
    private final class Storage: Sendable {
        let statusCode: Int
        let data: Data
        let request: URLRequest?
        let head: Head
        let fileURL: URL?
        let httpVersion: String?
        #if os(Linux)
            /// A lazy head's `HTTPURLResponse` once built, retained, as a bit pattern; 0 until then.
            /// Set once by compare-and-exchange: two readers racing may both build one, and the
            /// loser's is released. (Kept here rather than in an object of the head's own: one
            /// allocation fewer for every response.)
            private let built: Atomic<UInt>
        #endif

        /// - Parameter sharing: A response with the same head, whose `HTTPURLResponse` this one
        ///   keeps too if it is built already; if not, each builds its own when first read (which
        ///   no path in Courier does for both: a transport's head and the response with its body).
        init(
            statusCode: Int, data: Data, request: URLRequest?, head: Head, fileURL: URL?, httpVersion: String?,
            sharing other: Storage? = nil
        ) {
            self.statusCode = statusCode
            self.data = data
            self.request = request
            self.head = head
            self.fileURL = fileURL
            self.httpVersion = httpVersion
            #if os(Linux)
                var bits: UInt = 0
                if let built = other?.builtResponse {
                    bits = UInt(bitPattern: Unmanaged.passRetained(built).toOpaque())
                }
                self.built = Atomic(bits)
            #endif
        }

        #if os(Linux)
            deinit {
                if let built = builtResponse { Unmanaged.passUnretained(built).release() }
            }

            private var builtResponse: HTTPURLResponse? {
                guard let pointer = UnsafeRawPointer(bitPattern: built.load(ordering: .acquiring)) else { return nil }
                return Unmanaged<HTTPURLResponse>.fromOpaque(pointer).takeUnretainedValue()
            }
        #endif

        var response: HTTPURLResponse? {
            #if os(Linux)
                // Read before the head: once built, nothing of the head is copied out to answer.
                if let built = builtResponse { return built }
            #endif
            let made: HTTPURLResponse?
            switch head {
            case .built(let response): return response
            case .lazy(let lazy):
                #if os(Linux)
                    made = lazy.build()
                #else
                    return lazy.eager
                #endif
            case .sample:
                made = request?.url.flatMap {
                    HTTPURLResponse(url: $0, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: [:])
                }
            }
            #if os(Linux)
                guard let made else { return nil }
                let mine = Unmanaged.passRetained(made)
                let (exchanged, original) = built.compareExchange(
                    expected: 0, desired: UInt(bitPattern: mine.toOpaque()), successOrdering: .acquiringAndReleasing,
                    failureOrdering: .acquiring)
                if exchanged { return made }
                mine.release()
                guard let pointer = UnsafeRawPointer(bitPattern: original) else { return made }
                return Unmanaged<HTTPURLResponse>.fromOpaque(pointer).takeUnretainedValue()
            #else
                return made
            #endif
        }
    }

    /// The `HTTPURLResponse`, as given, or built when first read (see ``init(statusCode:data:request:url:httpVersion:headerFields:fileURL:transferMetrics:)``).
    private enum Head: Sendable {
        case built(HTTPURLResponse?)
        case lazy(LazyHTTPResponse)
        /// A stub's answer: `HTTP/1.1`, no header fields, the request's URL (read only when the
        /// `HTTPURLResponse` is built: issue 29, reading `URLRequest.url` and making an empty head
        /// cost a stubbed request ≈ 400 instructions). Linux only: built at once elsewhere.
        case sample
    }

    private let storage: Storage

    /// What happened during the call that produced this response: attempts, waits, refreshes,
    /// time in mappings and plugins (``RequestMetrics``). Set by the provider when the call ends;
    /// `nil` on a response made by hand, and in plugins' `didReceive` and `process`, which run
    /// before the call ends (``Plugin/didFinish(_:metrics:context:)`` receives them).
    public internal(set) var metrics: RequestMetrics? {
        get { annotations?.metrics }
        set { annotations = Annotations(transferMetrics: transferMetrics, metrics: newValue) }
    }

    /// Metrics, kept out of line so that a response (and every `Result` holding one) stays two
    /// words wide, and so that a response without them allocates nothing for them.
    private final class Annotations: Sendable {
        let transferMetrics: TransferMetrics?
        let metrics: RequestMetrics?

        init(transferMetrics: TransferMetrics?, metrics: RequestMetrics?) {
            self.transferMetrics = transferMetrics
            self.metrics = metrics
        }
    }

    private var annotations: Annotations?

    /// The HTTP status code.
    public var statusCode: Int { storage.statusCode }
    /// The body (empty when there was none).
    public var data: Data { storage.data }
    /// The request that was sent, after plugins' `prepare`.
    public var request: URLRequest? { storage.request }
    /// The HTTP response, with its headers.
    public var response: HTTPURLResponse? { storage.response }
    /// For a download, the file the body was saved to (``data`` is then empty).
    public var fileURL: URL? { storage.fileURL }
    /// The HTTP version the response came over, as the transport reported it: `"HTTP/1.1"` or
    /// `"HTTP/2"`. `nil` when the transport does not say: `URLSessionTransport`, because
    /// FoundationNetworking exposes neither the version nor task metrics; a response made by
    /// hand or by a stub. `AsyncHTTPClientTransport` reports it (HTTP/2 when the server offers
    /// it by ALPN). Also in the call's metrics (``TransferMetrics/httpVersion``).
    public var httpVersion: String? { storage.httpVersion }

    /// Creates a response.
    /// - Parameters:
    ///   - statusCode: The HTTP status code.
    ///   - data: The body.
    ///   - request: The request that was sent. Default: `nil`.
    ///   - response: The HTTP response. Default: `nil`.
    ///   - fileURL: For a download, where the body was saved. Default: `nil`.
    ///   - transferMetrics: What the transport measured (for transports). Default: `nil`.
    public init(
        statusCode: Int, data: Data, request: URLRequest? = nil, response: HTTPURLResponse? = nil,
        fileURL: URL? = nil, transferMetrics: TransferMetrics? = nil
    ) {
        storage = Storage(
            statusCode: statusCode, data: data, request: request, head: .built(response), fileURL: fileURL,
            httpVersion: nil)
        if let transferMetrics { annotations = Annotations(transferMetrics: transferMetrics, metrics: nil) }
    }

    /// Creates a response from a head as it came off the wire, for transports: ``response`` (the
    /// `HTTPURLResponse`) is built the first time it is read, while the status and
    /// ``value(forHTTPHeaderField:)`` never need it. On Linux, FoundationNetworking's
    /// `HTTPURLResponse` initializer costs tens of microseconds, which a request that never reads it
    /// does not pay.
    /// - Parameters:
    ///   - statusCode: The HTTP status code.
    ///   - data: The body.
    ///   - request: The request that was sent.
    ///   - url: The URL that answered.
    ///   - httpVersion: The protocol version, such as `HTTP/1.1` or `HTTP/2` (``httpVersion``).
    ///     Default: `HTTP/1.1`.
    ///   - headerFields: The header fields in the order received; repeated names are joined with
    ///     ", " under their first spelling, as URLSession does.
    ///   - fileURL: For a download, where the body was saved. Default: `nil`.
    ///   - transferMetrics: What the transport measured. Default: `nil`.
    public init(
        statusCode: Int, data: Data, request: URLRequest?, url: URL, httpVersion: String = "HTTP/1.1",
        headerFields: some Sequence<(String, String)>, fileURL: URL? = nil, transferMetrics: TransferMetrics? = nil
    ) {
        let head = LazyHTTPResponse(
            url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: headerFields)
        storage = Storage(
            statusCode: statusCode, data: data, request: request, head: .lazy(head), fileURL: fileURL,
            httpVersion: httpVersion)
        if let transferMetrics { annotations = Annotations(transferMetrics: transferMetrics, metrics: nil) }
    }

    /// An answer from the HTTP cache: the head built when first read, as a transport's is (issue
    /// 29: building the `HTTPURLResponse` for every fresh hit was ~59,000 instructions on Linux),
    /// and ``httpVersion`` `nil` (the stored response does not say which protocol brought it).
    init(
        cachedStatusCode statusCode: Int, data: Data, request: URLRequest, url: URL, headerFields: [(String, String)],
        transferMetrics: TransferMetrics
    ) {
        let head = LazyHTTPResponse(
            url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: headerFields)
        storage = Storage(
            statusCode: statusCode, data: data, request: request, head: .lazy(head), fileURL: nil, httpVersion: nil)
        annotations = Annotations(transferMetrics: transferMetrics, metrics: nil)
    }

    /// A sample (stub) answer without headers: the `HTTPURLResponse` (`HTTP/1.1`, no header fields)
    /// is built the first time ``response`` is read, as for a transport's head, and ``httpVersion``
    /// stays `nil` (a stub does not say). Issue 29: building it for every stubbed request was a
    /// tenth of the stubbed pipeline's instructions on Linux.
    init(sampleStatusCode statusCode: Int, data: Data, request: URLRequest) {
        #if os(Linux)
            let head = Head.sample
        #else
            // Cheap on Apple platforms, and cached there without `Atomic` (macOS 15 / iOS 18).
            let head = Head.built(
                request.url.flatMap {
                    HTTPURLResponse(url: $0, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: [:])
                })
        #endif
        storage = Storage(
            statusCode: statusCode, data: data, request: request, head: head, fileURL: nil, httpVersion: nil)
    }

    private init(_ other: Response, data: Data, fileURL: URL?) {
        storage = Storage(
            statusCode: other.statusCode, data: data, request: other.request, head: other.storage.head,
            fileURL: fileURL, httpVersion: other.httpVersion, sharing: other.storage)
        annotations = other.annotations
    }

    /// This head with a body: the same status, request and headers (for transports that read the
    /// head first, as ``init(statusCode:data:request:url:httpVersion:headerFields:fileURL:transferMetrics:)``
    /// made it, and the body after).
    /// - Parameters:
    ///   - data: The body.
    ///   - fileURL: For a download, where the body was saved. Default: `nil`.
    ///   - transferMetrics: What the transport measured. Default: `nil` (keeps this response's).
    /// - Returns: The response.
    public func withBody(_ data: Data, fileURL: URL? = nil, transferMetrics: TransferMetrics? = nil) -> Response {
        var response = Response(self, data: data, fileURL: fileURL)
        if let transferMetrics { response.transferMetrics = transferMetrics }
        return response
    }

    /// What the transport reported about the exchange (bytes, redirects, when the head arrived),
    /// if it did.
    public var transferMetrics: TransferMetrics? {
        get { annotations?.transferMetrics }
        set { annotations = Annotations(transferMetrics: newValue, metrics: metrics) }
    }

    /// A copy saved at `fileURL` instead.
    func moved(to fileURL: URL) -> Response {
        Response(self, data: data, fileURL: fileURL)
    }

    public var description: String {
        if let fileURL { return "Status Code: \(statusCode), File: \(fileURL.path)" }
        return "Status Code: \(statusCode), Data Length: \(data.count)"
    }

    public var debugDescription: String { description }

    /// The value of a response header, matched without regard to case.
    /// - Parameter name: The header name.
    /// - Returns: The value, or `nil` when absent.
    public func value(forHTTPHeaderField name: String) -> String? {
        switch storage.head {
        case .built(let response): response?.value(forHTTPHeaderField: name)
        case .lazy(let head): head.value(forHTTPHeaderField: name)
        case .sample: nil
        }
    }

    /// The `Content-Length` header, or -1 when it is absent or not a number (ASCII digits, spaces
    /// and tabs around them allowed), read without building the `HTTPURLResponse`. Repeated
    /// fields are joined first, so two lengths are not a number. Unlike
    /// `URLResponse.expectedContentLength`, which Apple's URLSession may report as -1 for a
    /// compressed body, this is what the server announced: the encoded size when
    /// `Content-Encoding` is set.
    public var expectedContentLength: Int64 {
        switch storage.head {
        case .built(let response): ResponseBodyLimit.contentLength(of: response)
        case .lazy(let head): head.expectedContentLength
        case .sample: -1
        }
    }
}

extension Response {
    /// Returns `self` when the status code is in `statusCodes`.
    /// - Parameter statusCodes: Accepted codes, e.g. `200...299` or `[200, 204]`-like ranges.
    /// - Returns: This response.
    /// - Throws: ``CourierError/statusCode(_:)`` otherwise.
    public func filter<R: RangeExpression>(statusCodes: R) throws(CourierError) -> Response
    where R.Bound == Int {
        guard statusCodes.contains(statusCode) else { throw .statusCode(self) }
        return self
    }

    /// Returns `self` when the status code is exactly `statusCode`.
    /// - Parameter code: The accepted code.
    /// - Returns: This response.
    /// - Throws: ``CourierError/statusCode(_:)`` otherwise.
    public func filter(statusCode code: Int) throws(CourierError) -> Response {
        try filter(statusCodes: code...code)
    }

    /// Returns `self` when the status code is in `200...299`.
    /// - Throws: ``CourierError/statusCode(_:)`` otherwise.
    public func filterSuccessfulStatusCodes() throws(CourierError) -> Response {
        try filter(statusCodes: 200...299)
    }

    /// Returns `self` when the status code is in `200...399`.
    /// - Throws: ``CourierError/statusCode(_:)`` otherwise.
    public func filterSuccessfulStatusAndRedirectCodes() throws(CourierError) -> Response {
        try filter(statusCodes: 200...399)
    }
}
