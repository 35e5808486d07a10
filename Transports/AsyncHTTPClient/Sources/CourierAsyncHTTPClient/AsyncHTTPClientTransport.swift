import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if os(watchOS)
    #error(
        "AsyncHTTPClientTransport does not support watchOS: apps there may not open sockets of their own. Use URLSessionTransport."
    )
#endif

/// A Courier ``Courier/Transport`` on [AsyncHTTPClient](https://github.com/swift-server/async-http-client):
/// SwiftNIO's HTTP client, for servers and command-line tools on Linux, where it sends several
/// times the requests per second of FoundationNetworking's `URLSession` at a fraction of the CPU.
///
/// ```swift
/// let provider = Provider<GitHub>(transport: AsyncHTTPClientTransport())
/// ```
///
/// It behaves as ``Courier/URLSessionTransport`` does, and the same conformance suite
/// (`CourierTransportConformance`) holds both to it: bodies from memory and from files streamed
/// from disk, downloads streamed to disk, progress both ways, streamed responses, cancellation
/// that closes the connection, redirects by Courier's rules
/// (``Courier/Transfer/following(redirect:redirects:)``), gzip and deflate bodies decoded under
/// ``Courier/Limits``, and no cookies stored or sent. Where they differ, it is documented here:
///
/// - Errors from the network are `URLError`s with the closest code (the AsyncHTTPClient or
///   SwiftNIO error under `NSUnderlyingErrorKey`); `URLSession`'s codes come from libcurl on
///   Linux and are not always the same for the same fault. A refused server certificate is
///   ``Courier/CourierError/serverTrust(host:reason:underlying:)`` on both; to tell why, this
///   transport makes one more handshake with the server (no request), since AsyncHTTPClient's
///   error does not say.
/// - ``Courier/Response/httpVersion`` says `HTTP/2` or `HTTP/1.1` (`URLSessionTransport` cannot).
/// - A gzip body of several members (RFC 1952) is decoded whole; on Linux `URLSessionTransport`
///   fails it (libcurl refuses what follows the first member). A body encoded twice
///   (`Content-Encoding: gzip, gzip`) fails with `URLError(.cannotDecodeContentData)`; libcurl
///   decodes it.
/// - A slow download waits for the disk without reading from the socket (real backpressure);
///   nothing else in the process waits with it.
/// - A response cut off by the server ends with an error, but the body parts AsyncHTTPClient had
///   received and not yet handed over when the connection broke are lost (it discards them with
///   the error); `URLSessionTransport` hands over every byte before the error. A stream reader sees
///   what arrived in order, never invented, then the error.
/// - Trust policies (``init(client:uploadClient:userAgent:trust:tlsConfiguration:)``): roots and client
///   identities are enforced; pins and evaluators are refused when the transport is made, because
///   AsyncHTTPClient 1.37 offers no hook before the request is sent.
/// - Requests with a body to `https` URLs go over HTTP/1.1, on ``uploadClient``; requests without
///   one keep HTTP/2. AsyncHTTPClient 1.37 crashes the process when an HTTP/2 server completes a
///   2xx answer while the request body has not been wholly handed to the connection and the
///   stream then closes or drains (force unwraps in its HTTP/2 request handler,
///   [async-http-client#922](https://github.com/swift-server/async-http-client/issues/922)). A
///   server that answers an upload without reading it does this every time; one that answers as
///   soon as it has the announced length, now and then; and a body in memory, which
///   AsyncHTTPClient otherwise hands over right after the head, waits too when the connection is
///   full, which a server that stops reading can arrange. ``sharedClient``'s transports use
///   ``sharedUploadClient``; with a client of your own, pass `uploadClient:` one made from the
///   same configuration with `httpVersion = .http1Only`, or requests with a body go on your
///   client and, over HTTP/2, the crash stays possible.
/// - The idle timeout between reads is the client's (`read` in its configuration: 60 s in
///   ``clientConfiguration()``), not `URLRequest.timeoutInterval`. AsyncHTTPClient starts it only
///   once the request body is sent; while a body goes out, ``sendIdleTimeout`` (60 s) ends a
///   request whose body stops moving with no answer arriving. Courier's own deadlines
///   (``Courier/TargetType/timeout``) work the same on both transports.
public struct AsyncHTTPClientTransport: Transport {
    /// The client requests run on.
    public let client: HTTPClient
    /// The client that carries requests with a body to URLs that may speak TLS (`https`, and
    /// AsyncHTTPClient's `https+unix`): HTTP/1.1 only, because of an AsyncHTTPClient crash over
    /// HTTP/2 (see the type's documentation). ``sharedUploadClient`` when ``client`` is
    /// ``sharedClient``, otherwise the one given to `init`, or ``client`` when none was.
    public let uploadClient: HTTPClient
    /// The `User-Agent` sent when a request has none; `nil` sends none.
    public let userAgent: String?
    /// The longest a request body sent in parts (a non-empty file, a body in memory larger than
    /// 64 KiB or sent with progress) may go with none of it taken by the connection and no head
    /// or byte of the answer arriving; then the request fails with `URLError(.timedOut)`.
    /// AsyncHTTPClient starts its `read` timeout only once the body is sent, so a server that
    /// stops reading an upload and never answers would otherwise hold it for ever. The watch
    /// counts from when the connection first asks for the body (waiting for a connection is not
    /// a stall) until its last part is taken; after that only the client's `read` timeout applies
    /// (none on a client made without one). The slowest upload it lets through takes one part
    /// (64 KiB from memory, 1 MiB from a file) per this timeout. Default: 60 s, as
    /// ``clientConfiguration()``'s `read`; `nil`, zero or less: none.
    public var sendIdleTimeout: Duration? = .seconds(60)

    /// The client a transport uses unless given one: made once per process on SwiftNIO's shared
    /// event loops with ``clientConfiguration()``, never shut down (like `HTTPClient.shared`), so
    /// nobody has to shut anything down.
    public static let sharedClient = HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: clientConfiguration())

    /// The client ``sharedClient``'s transports send requests with a body over HTTPS with:
    /// ``clientConfiguration()`` with HTTP/1.1 only, made once per process on SwiftNIO's shared
    /// event loops, never shut down.
    public static let sharedUploadClient: HTTPClient = {
        var configuration = clientConfiguration()
        configuration.httpVersion = .http1Only
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// The `User-Agent` sent by default.
    public static let defaultUserAgent = "Courier (AsyncHTTPClient)"

    /// A client configuration Courier's rules work with: redirects **not** followed by the client
    /// (the transport follows them itself, by Courier's rules), decompression off (the transport
    /// decodes under Courier's limits), 60 s to connect and between reads. Build a client of your
    /// own from it to change the rest (TLS, proxy, pool); a client that follows redirects or
    /// decompresses itself bypasses Courier's redirect rules and decompression limits.
    public static func clientConfiguration() -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(connect: .seconds(60), read: .seconds(60)),
            decompression: .disabled)
        // A connection that cannot be made fails the requests waiting for it at once, as with
        // URLSession, instead of being retried until their deadline (Courier's retry policy
        // decides about retries).
        configuration.connectionPool.retryConnectionEstablishment = false
        #if canImport(Network)
            // On Apple platforms the connections are Network.framework's, which by default wait
            // for connectivity: a refused connection would wait for the connect timeout instead
            // of failing at once, as it does on Linux and with URLSession.
            configuration.networkFrameworkWaitForConnectivity = false
        #endif
        return configuration
    }

    /// The TLS configuration per host from the trust policies; `nil` for the system's evaluation.
    private let trust: TrustConfigurations?

    /// Creates a transport.
    /// - Parameters:
    ///   - client: The client. Default: ``sharedClient``. You shut down a client you made.
    ///   - uploadClient: The client for requests with a body to `https` URLs, HTTP/1.1 only (see
    ///     ``uploadClient``). Default: ``sharedUploadClient`` with ``sharedClient``, otherwise
    ///     `client`.
    ///   - userAgent: The `User-Agent` for requests without one. Default: ``defaultUserAgent``.
    public init(
        client: HTTPClient = AsyncHTTPClientTransport.sharedClient, uploadClient: HTTPClient? = nil,
        userAgent: String? = defaultUserAgent
    ) {
        self.client = client
        self.uploadClient = Self.uploadClient(uploadClient, for: client)
        self.userAgent = userAgent
        self.trust = nil
    }

    /// The client given for uploads, or the one that goes with `client`.
    private static func uploadClient(_ given: HTTPClient?, for client: HTTPClient) -> HTTPClient {
        given ?? (client === sharedClient ? sharedUploadClient : client)
    }

    /// Creates a transport with trust policies per host.
    ///
    /// Roots (added to the system's or replacing them) and a client identity (PEM or PKCS #12)
    /// are enforced by AsyncHTTPClient's TLS: each request to a host whose policy is not
    /// ``Courier/TrustPolicy/system`` carries that policy's `TLSConfiguration` (made once, here,
    /// from `tlsConfiguration`), and the client keeps a connection pool per host and policy. Hosts
    /// with the system's policy use the client's own configuration. Pins and evaluators are
    /// refused: AsyncHTTPClient 1.37 offers no way to look at the server's certificate before the
    /// request is sent (see the TLS and Trust article in Courier's documentation).
    ///
    /// - Parameters:
    ///   - client: The client. Default: ``sharedClient``. You shut down a client you made.
    ///   - uploadClient: The client for requests with a body to `https` URLs, HTTP/1.1 only (see
    ///     ``uploadClient``). Default: ``sharedUploadClient`` with ``sharedClient``, otherwise
    ///     `client`.
    ///   - userAgent: The `User-Agent` for requests without one. Default: ``defaultUserAgent``.
    ///   - trust: The policies, by host.
    ///   - tlsConfiguration: What each policy's configuration starts from. Default:
    ///     `TLSConfiguration.makeClientConfiguration()` (full verification, the system's roots).
    /// - Throws: ``Courier/TrustConfigurationError`` for pins or an evaluator, or a value that
    ///   cannot be read (a certificate, a key, a PKCS #12 password).
    public init(
        client: HTTPClient = AsyncHTTPClientTransport.sharedClient, uploadClient: HTTPClient? = nil,
        userAgent: String? = defaultUserAgent, trust: TrustPolicies,
        tlsConfiguration: TLSConfiguration = .makeClientConfiguration()
    ) throws(TrustConfigurationError) {
        let configurations = try TrustConfigurations(trust, base: tlsConfiguration)
        self.client = client
        self.uploadClient = Self.uploadClient(uploadClient, for: client)
        self.userAgent = userAgent
        self.trust = configurations.isSystem ? nil : configurations
    }

    /// Runs a transfer, streaming both ways: a file body is read from disk as it is sent, a file
    /// destination is written as the response arrives (the socket is read no faster than the
    /// disk writes), and progress is reported as bytes move. On failure or cancellation a partly
    /// written destination file is removed, unless ``Courier/Transfer/downloadHeadArrived`` is set
    /// (the provider resumes from it). Limits hold while the body arrives.
    public func send(_ transfer: Transfer) async throws -> Response {
        let first = try prepare(transfer)
        guard let watch = first.watch else { return try await exchange(transfer, first: first) }
        return try await watch.guarding { try await self.exchange(transfer, first: first) }
    }

    /// The whole exchange of ``send(_:)``, up to the body in memory or in its file.
    private nonisolated(nonsending) func exchange(_ transfer: Transfer, first: Prepared) async throws -> Response {
        let exchange = try await open(transfer, first: first)
        switch transfer.destination {
        case .memory: return try await exchange.collect()
        case .file(let url): return try await exchange.download(to: url)
        }
    }

    /// Runs a transfer and returns as soon as the response head arrives; the body follows in the
    /// returned ``Courier/StreamedResponse/body``. The body's reader going away (or its task being
    /// cancelled) cancels the request and closes its connection.
    public func stream(_ transfer: Transfer) async throws -> StreamedResponse {
        var streamed = transfer
        streamed.destination = .memory
        let transfer = streamed
        let first = try prepare(transfer)
        guard let watch = first.watch else { return try await open(transfer, first: first).stream() }
        // Watched up to the head, and then by the body's reader (Exchange.stream): after an early
        // answer the body may still be going out.
        return try await watch.guarding { try await self.open(transfer, first: first) }.stream()
    }

    /// A hop's request, ready to go: the request, its body's size and, for a body sent in parts,
    /// its ``SendWatch``.
    struct Prepared: Sendable {
        var request: HTTPClientRequest
        var bytesSent: Int64
        /// The client that carries it.
        var carrier: HTTPClient
        var watch: SendWatch?
    }

    /// Checks a hop's transfer and makes its request. The first hop's body sent in parts gets a
    /// new watch (see ``SendWatch``); a later hop (`after` the first) uses the first one's watch,
    /// which rests until its body starts, or for good when it has none.
    private func prepare(_ transfer: Transfer, after first: Prepared? = nil) throws -> Prepared {
        try Task.checkCancellation()
        try transfer.checkDestination()
        return try makeRequest(transfer, after: first)
    }

    /// Sends the transfer and follows redirects by Courier's rules, up to the answer's head.
    private nonisolated(nonsending) func open(_ transfer: Transfer, first: Prepared) async throws -> Exchange {
        var current = transfer
        var prepared = first
        var redirects = 0
        while true {
            let response: HTTPClientResponse
            do {
                response = try await prepared.carrier.execute(prepared.request, deadline: .distantFuture)
                prepared.watch?.answered()
            } catch {
                // A refused certificate: typed, with the host and the reason (see ServerTrust).
                if let refusal = await ServerTrust.refusal(error, url: current.request.url) { throw refusal }
                throw ErrorMapping.normalize(error)
            }
            let responseStart = current.elapsed?()
            let head = try Self.head(of: response, request: current.request)
            current.downloadHeadArrived?(head)  // Durable downloads (27)
            guard let next = try current.following(redirect: head, redirects: redirects) else {
                let exchange = Exchange(
                    transfer: current, response: response, head: head, redirects: redirects,
                    responseStart: responseStart, bytesSent: prepared.bytesSent, watch: prepared.watch)
                exchange.reportStart()
                return exchange
            }
            // The redirect's own body is not wanted: a little is read so the connection can be
            // used again; more, and the connection is closed instead.
            _ = try? await response.body.collect(upTo: 64 << 10)
            redirects += 1
            current = next
            prepared = try prepare(next, after: first)
        }
    }

    /// Bodies in memory up to this size go to AsyncHTTPClient whole (unless progress is asked
    /// for): the sockets' buffers take them at once, and AsyncHTTPClient's `read` timeout starts.
    /// Larger ones go in parts, watched (see ``SendWatch``).
    static let wholeBodyLimit = 64 << 10

    /// The AsyncHTTPClient request for a transfer's request, with its body, the body's size, the
    /// client that carries it and, for a body sent in parts, its watch (see ``prepare(_:after:)``).
    private func makeRequest(_ transfer: Transfer, after first: Prepared?) throws -> Prepared {
        // checkDestination has made sure there is a URL.
        var request = HTTPClientRequest(url: transfer.request.url?.absoluteString ?? "")
        request.method = HTTPMethod(rawValue: transfer.request.httpMethod ?? "GET")
        if let trust, let url = transfer.request.url, url.scheme?.lowercased() == "https", let host = url.host {
            request.tlsConfiguration = trust.configuration(forHost: host)
        }
        var hasUserAgent = false
        var hasAcceptEncoding = false
        for (name, value) in transfer.request.allHTTPHeaderFields ?? [:] {
            // Matched without lowercasing a copy of each name.
            if Self.isNamed(name, "content-length") || Self.isNamed(name, "transfer-encoding") {
                continue  // The body decides these (as URLSession does).
            }
            if Self.isNamed(name, "user-agent") { hasUserAgent = true }
            if Self.isNamed(name, "accept-encoding") { hasAcceptEncoding = true }
            request.headers.add(name: name, value: value)
        }
        if !hasUserAgent, let userAgent { request.headers.add(name: "User-Agent", value: userAgent) }
        if !hasAcceptEncoding { request.headers.add(name: "Accept-Encoding", value: "gzip, deflate") }
        let progress = transfer.progress
        // A body to a URL that may speak TLS, so HTTP/2, goes over HTTP/1.1 (see uploadClient).
        func carrier() -> HTTPClient { Self.isCleartext(transfer.request.url) ? client : uploadClient }
        // A later hop's watch rests until its body starts (or for good: a 303 sends none).
        let hop = first?.watch?.nextHop() ?? SendWatch.firstHop
        func watching() -> SendWatch? {
            if let first { return first.watch }
            guard let idle = sendIdleTimeout, idle > .zero else { return nil }
            return SendWatch(idle: idle)
        }
        if let size = try transfer.fileBodySize(), case .file(let url) = transfer.body {
            let carrier = size > 0 ? carrier() : client
            let watch = size > 0 ? watching() : nil
            request.body = .stream(
                FileChunks(
                    url: url, size: size, progress: progress, watch: watch.map { .init(watch: $0, hop: hop) },
                    pacing: size > 0 ? Pacing(carrier.eventLoopGroup) : nil),
                length: .known(Int64(size)))
            return Prepared(request: request, bytesSent: Int64(size), carrier: carrier, watch: watch)
        } else if let data = transfer.request.httpBody, !data.isEmpty {
            let carrier = carrier()
            var watch: SendWatch?
            if progress != nil || data.count > Self.wholeBodyLimit {
                watch = watching()
                request.body = .stream(
                    DataChunks(
                        data: data, progress: progress, watch: watch.map { .init(watch: $0, hop: hop) },
                        pacing: Pacing(carrier.eventLoopGroup)),
                    length: .known(Int64(data.count)))
            } else {
                request.body = .bytes(ByteBuffer(bytes: data))
            }
            return Prepared(request: request, bytesSent: Int64(data.count), carrier: carrier, watch: watch)
        }
        if transfer.request.httpBodyStream != nil {
            // Sending none would answer the caller as if the body had gone (found by review).
            throw CourierError.invalidUse(Self.bodyStreamMessage)
        }
        return Prepared(request: request, bytesSent: 0, carrier: client, watch: nil)
    }

    /// What a request whose body is a `URLRequest.httpBodyStream` is refused with.
    static let bodyStreamMessage =
        "AsyncHTTPClientTransport does not send a URLRequest.httpBodyStream (an InputStream can only be read "
        + "by blocking a thread, and cannot be sent again after a 307 or 308): send the body as "
        + "HTTPTask.uploadFile, as Data, or as a multipart form"

    /// Whether AsyncHTTPClient speaks plain HTTP/1.1 to a URL (`http`, `http+unix`, `unix`, in
    /// any case): never TLS, so never HTTP/2.
    static func isCleartext(_ url: URL?) -> Bool {
        switch url?.scheme?.lowercased() {
        case "http", "http+unix", "unix": true
        default: false
        }
    }

    /// Whether a header name is `lowercase` (lowercase ASCII), ignoring ASCII case.
    static func isNamed(_ name: String, _ lowercase: StaticString) -> Bool {
        guard name.utf8.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            zip(name.utf8, expected).allSatisfy { byte, lower in
                (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte) == lower
            }
        }
    }

    /// The response head as a ``Courier/Response`` without a body. Its `HTTPURLResponse` is built
    /// only if someone reads it (repeated fields joined with ", " under their first spelling, as
    /// URLSession does): on Linux building one costs more than the rest of the transport's work.
    static func head(of response: HTTPClientResponse, request: URLRequest) throws -> Response {
        guard let url = request.url else { throw URLError(.badServerResponse) }
        // An array, which the head reads through its buffer (issue 29: a lazy sequence over
        // AsyncHTTPClient's fields was read through generic code at 3–5 µs a response).
        var fields: [(String, String)] = []
        fields.reserveCapacity(response.headers.count)
        for (name, value) in response.headers { fields.append((name, value)) }
        return Response(
            statusCode: Int(response.status.code), data: Data(), request: request, url: url,
            httpVersion: response.version.major >= 2 ? "HTTP/2" : "HTTP/1.1", headerFields: fields)
    }
}
