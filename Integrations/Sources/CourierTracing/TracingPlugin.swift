import Courier
import Foundation
import Tracing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One span per call into swift-distributed-tracing, with the trace context sent along in the
/// request's headers.
///
/// ```swift
/// InstrumentationSystem.bootstrap(tracer)        // swift-otel, or any Tracer
/// let provider = Provider<GitHub>(plugins: [.accessToken { _ in token }, .tracing()])
/// ```
///
/// ## The span
/// Started in ``prepare(_:context:)``, as a child of the caller's task-local
/// `ServiceContext.current` (a new trace when there is none), ended in
/// ``didFinish(_:metrics:context:)``, for every call: succeeded, failed, cancelled or timed out.
/// Its name is the method and the target, `GET GitHub.user` (never associated values), its kind
/// `.client`. Attributes:
///
/// | attribute | when | value |
/// |---|---|---|
/// | `courier.target` | start | `GitHub.user` |
/// | `courier.request_id` | start | the call's `RequestID` |
/// | `http.request.method` | start | `GET` |
/// | `url.full` | start, each attempt | the URL, secrets replaced by ``redaction`` |
/// | `server.address`, `server.port` | start | the URL's host and port |
/// | `http.response.status_code` | end | the last response's status, when one arrived |
/// | `courier.attempts` | end | sends, re-sends after a refresh included |
/// | `courier.refreshes` | end | credential refreshes waited for |
/// | `courier.joined_shared_request` | end | whether an attempt joined an identical request in flight |
/// | `courier.cache_status` | end, when a response arrived | where it came from (`Response.cacheStatus`): `network`, `hit`, `revalidated` or `stale_after_error` |
/// | `network.protocol.version` | end | the last attempt's HTTP version, when the transport says |
/// | `network.peer.address` | end | the server's IP address, when the transport says |
/// | `courier.connection.reused` | end | whether the last attempt reused a connection, when the transport says |
/// | `courier.connection.dns_ms`, `.connect_ms`, `.tls_ms` | end | the last attempt's DNS, connect and TLS times, when the transport says (`TransferMetrics`) |
/// | `error.type` | end, failures | the `CourierError` case, `cancelled` or `timeout` |
///
/// Events: `courier.attempt` before each send (`courier.attempt`: its number), `courier.retry`
/// before each wait (`courier.attempt`: the attempt that failed, `courier.retry.delay_ms`,
/// `error.type`), `courier.credential_refresh` before a refresh. A failed call records its error
/// and sets the span's status to `.error`.
///
/// ## The trace context in the request
/// ``prepare(_:context:)`` asks the tracer to inject the span's context into the request's headers:
/// the tracer decides the names (swift-otel's W3C propagator writes `traceparent` and `tracestate`)
/// and replaces a header of that name already there. Plugins' `prepare` run in plugin order, so
/// place `.tracing()` after the plugins that change the request and before one that signs it,
/// which then signs the trace headers too. Every attempt of a call sends the same context.
///
/// ## Limits
/// A span is kept from `prepare` until `didFinish` of its call, which every call reaches; at most
/// as many spans are open as calls are in flight. A call stopped before this plugin's `prepare`
/// ran (a failed mapping, an earlier plugin's `prepare` that threw) still gets its span, started
/// and ended in `didFinish`.
public struct TracingPlugin: Plugin {
    /// Where spans go. Default: the bootstrapped `InstrumentationSystem.tracer`.
    public let tracer: any Tracer
    /// What is secret in `url.full`. Default: `RedactionPolicy.default`.
    public let redaction: RedactionPolicy
    private let spans = OpenSpans()

    /// Creates the plugin.
    /// - Parameters:
    ///   - tracer: Where spans go. Default: `InstrumentationSystem.tracer`.
    ///   - redaction: What is secret in the URL attribute. Default: `RedactionPolicy.default`.
    public init(tracer: any Tracer = InstrumentationSystem.tracer, redaction: RedactionPolicy = .default) {
        self.tracer = tracer
        self.redaction = redaction
    }

    /// `prepare`, `willSend`, `willRetry`, `willRefreshCredential` and `didFinish`: the hooks
    /// below.
    public var implementedHooks: PluginHooks {
        [.prepare, .willSend, .willRetry, .willRefreshCredential, .didFinish]
    }

    /// Starts the call's span (a child of the caller's `ServiceContext.current`) and injects its
    /// context into the request's headers.
    public func prepare(_ request: consuming URLRequest, context: RequestContext) async throws -> URLRequest {
        var request = request  // owned here: the span reads it, then the context goes into it
        let parent = ServiceContext.current ?? .topLevel
        let span: any Span
        if let open = await spans.open(context.id) {
            span = open  // `prepare` ran again for this call: the call keeps its first span.
        } else {
            span = startSpan(parent: parent, request: request, context: context)
            await spans.insert(span, for: context.id)
        }
        tracer.inject(span.context, into: &request, using: HeaderInjector())
        return request
    }

    public func willSend(_ request: URLRequest, context: RequestContext) async {
        guard let span = await spans.open(context.id) else { return }
        if let url = request.url {
            span.updateAttributes { $0["url.full"] = redaction.url(url).absoluteString }
        }
        span.addEvent(SpanEvent(name: "courier.attempt", attributes: ["courier.attempt": .int(Int64(context.attempt))]))
    }

    public func willRetry(
        _ request: URLRequest, after error: CourierError, delay: Duration, context: RequestContext
    ) async {
        guard let span = await spans.open(context.id) else { return }
        var attributes: SpanAttributes = ["courier.attempt": .int(Int64(context.attempt))]
        attributes["courier.retry.delay_ms"] = Int(Self.milliseconds(delay))
        attributes["error.type"] = Self.errorType(error)
        span.addEvent(SpanEvent(name: "courier.retry", attributes: attributes))
    }

    public func willRefreshCredential(_ request: URLRequest, context: RequestContext) async {
        guard let span = await spans.open(context.id) else { return }
        span.addEvent(SpanEvent(name: "courier.credential_refresh"))
    }

    /// Sets the call's closing attributes, records its error, and ends its span.
    public func didFinish(
        _ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext
    ) async {
        let parent = ServiceContext.current ?? .topLevel
        let span =
            await spans.close(context.id) ?? startSpan(parent: parent, request: nil, context: context)
        span.updateAttributes { attributes in
            attributes["courier.attempts"] = metrics.attempts.count
            attributes["courier.refreshes"] = metrics.refreshes
            attributes["courier.joined_shared_request"] = metrics.joinedSharedRequest
            if let transfer = metrics.attempts.last?.transfer {
                if let version = transfer.httpVersion {
                    attributes["network.protocol.version"] = Self.protocolVersion(version)
                }
                if let address = transfer.remoteAddress { attributes["network.peer.address"] = address }
                if let reused = transfer.connectionReused { attributes["courier.connection.reused"] = reused }
                if let lookup = transfer.domainLookup {
                    attributes["courier.connection.dns_ms"] = Int(Self.milliseconds(lookup))
                }
                if let connect = transfer.connect {
                    attributes["courier.connection.connect_ms"] = Int(Self.milliseconds(connect))
                }
                if let tls = transfer.secureConnection {
                    attributes["courier.connection.tls_ms"] = Int(Self.milliseconds(tls))
                }
            }
        }
        // OpenTelemetry's semantic conventions have no HTTP cache attribute: Courier's own name.
        if let status = Self.cacheStatus(of: result) {
            span.updateAttributes { $0["courier.cache_status"] = status }
        }
        switch result {
        case .success(let response):
            span.updateAttributes { $0["http.response.status_code"] = response.statusCode }
            // A client span with a 4xx or 5xx answer is an error (OpenTelemetry's HTTP semantic
            // conventions, `error.type` the status code), whether or not the target validated the
            // status (found by review: with the default `.none` it was left unset).
            if response.statusCode >= 400 {
                span.updateAttributes { $0["error.type"] = String(response.statusCode) }
                span.setStatus(SpanStatus(code: .error, message: String(response.statusCode)))
            }
        case .failure(let error):
            span.updateAttributes { attributes in
                if let code = error.response?.statusCode { attributes["http.response.status_code"] = code }
                attributes["error.type"] = Self.errorType(error)
            }
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: Self.errorType(error)))
        }
        span.end()
    }

    private func startSpan(parent: ServiceContext, request: URLRequest?, context: RequestContext) -> any Span {
        let method = request?.httpMethod ?? context.target.method.rawValue
        let span = tracer.startSpan("\(method) \(context.targetName)", context: parent, ofKind: .client)
        span.updateAttributes { attributes in
            attributes["courier.target"] = context.targetName
            attributes["courier.request_id"] = context.id.description
            attributes["http.request.method"] = method
            if let url = request?.url {
                attributes["url.full"] = redaction.url(url).absoluteString
                if let host = url.host { attributes["server.address"] = host }
                if let port = url.port { attributes["server.port"] = port }
            }
        }
        return span
    }

    /// `cancelled`, `timeout`, or the error's case name (`statusCode`, `underlying`…).
    static func errorType(_ error: CourierError) -> String {
        if error.isCancellation { return "cancelled" }
        if error.isTimeout { return "timeout" }
        // The case's name: a case with values is the one child of its mirror.
        return Mirror(reflecting: error).children.first?.label ?? "CourierError"
    }

    /// The last response's `CacheStatus` as an attribute value; `nil` when no response arrived.
    static func cacheStatus(of result: Result<Response, CourierError>) -> String? {
        let response: Response? =
            switch result {
            case .success(let response): response
            case .failure(let error): error.response
            }
        return response.map { cacheStatusValue($0.cacheStatus) }
    }

    /// `network`, `hit`, `revalidated` or `stale_after_error`.
    static func cacheStatusValue(_ status: CacheStatus) -> String {
        switch status {
        case .network: "network"
        case .hit: "hit"
        case .revalidated: "revalidated"
        case .staleAfterError: "stale_after_error"
        }
    }

    /// `HTTP/1.1` → `1.1`, `HTTP/2` → `2`, as OpenTelemetry writes `network.protocol.version`.
    static func protocolVersion(_ version: String) -> String {
        version.hasPrefix("HTTP/") ? String(version.dropFirst(5)) : version
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? .max : product &+ attoseconds / 1_000_000_000_000_000
    }
}

extension Plugin where Self == TracingPlugin {
    /// A ``TracingPlugin``: one span per call, its context sent in the request's headers.
    /// - Parameters:
    ///   - tracer: Where spans go. Default: `InstrumentationSystem.tracer`.
    ///   - redaction: What is secret in the URL attribute. Default: `RedactionPolicy.default`.
    /// - Returns: The plugin.
    public static func tracing(
        tracer: any Tracer = InstrumentationSystem.tracer, redaction: RedactionPolicy = .default
    ) -> TracingPlugin {
        TracingPlugin(tracer: tracer, redaction: redaction)
    }
}
