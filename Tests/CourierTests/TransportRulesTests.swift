import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The rules transports apply through `Transfer` and `ResponseBodyLimit`, checked without a network.
struct TransportRulesTests {
    static let origin = URL(string: "https://api.example.com/v1/items?page=2")!

    static func transfer(
        method: String = "POST", body: Transfer.Body = .inRequest, limits: Limits = .default
    ) -> Transfer {
        var request = URLRequest(url: origin)
        request.httpMethod = method
        request.httpBody = Data("payload".utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        request.setValue("a=b", forHTTPHeaderField: "Cookie")
        request.setValue("1", forHTTPHeaderField: "X-Keep")
        request.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
        request.setValue("en", forHTTPHeaderField: "Content-Language")
        request.setValue("sha-256=:abc=:", forHTTPHeaderField: "Digest")
        request.setValue("sha-256=:abc=:", forHTTPHeaderField: "Content-Digest")
        return Transfer(request: request, body: body, limits: limits)
    }

    static func redirect(_ status: Int, to location: String?) -> Response {
        Response(
            statusCode: status, data: Data(), request: nil, url: origin,
            headerFields: location.map { [("location", $0)] } ?? [])
    }

    @Test(arguments: [
        // status, method, expected method, body kept
        (301, "POST", "POST→GET", false), (302, "POST", "POST→GET", false), (303, "POST", "POST→GET", false),
        (303, "PUT", "PUT→GET", false), (303, "HEAD", "HEAD→HEAD", true), (301, "PUT", "PUT→PUT", true),
        (302, "DELETE", "DELETE→DELETE", true), (307, "POST", "POST→POST", true), (308, "PATCH", "PATCH→PATCH", true),
    ])
    func methodAndBodyFollowTheStatus(status: Int, method: String, change: String, keepsBody: Bool) throws {
        let next = try #require(
            try Self.transfer(method: method).following(redirect: Self.redirect(status, to: "/v2/items"), redirects: 0))
        #expect("\(method)→\(next.request.httpMethod ?? "")" == change)
        #expect(next.request.url?.absoluteString == "https://api.example.com/v2/items")
        #expect((next.request.httpBody != nil) == keepsBody)
        #expect((next.request.value(forHTTPHeaderField: "Content-Type") != nil) == keepsBody)
        // The fields describing the body go with it (RFC 9110 §15.4). Found by review.
        for name in ["Content-Encoding", "Content-Language", "Digest", "Content-Digest"] {
            #expect((next.request.value(forHTTPHeaderField: name) != nil) == keepsBody, "\(name)")
        }
        // Same origin: credentials stay.
        #expect(next.request.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
    }

    /// A compressed body's bytes on the wire, beyond those they decoded to, are held to the body
    /// limit, with room for what compression adds; a stream (no maximum) is never held.
    @Test func theWireBytesOfAnEncodedBodyAreHeldToTheLimitWithAnAllowance() {
        let memory = ResponseBodyLimit(toFile: false, limits: Limits(maxResponseBytes: 1 << 20))
        let allowed: Int64 = (1 << 20) + 1_024 + 1_024
        #expect(memory.crossed(onTheWire: allowed, decoded: 0) == nil)
        #expect(memory.crossed(onTheWire: allowed + 1, decoded: 0) == .responseBody(limit: 1 << 20))
        // What the wire bytes decoded to is not held here (the limit on decoded bytes holds it).
        #expect(memory.crossed(onTheWire: allowed + (1 << 20), decoded: 1 << 20) == nil)
        #expect(memory.crossed(onTheWire: allowed + (1 << 20) + 1, decoded: 1 << 20) == .responseBody(limit: 1 << 20))
        // More decoded than came (a body that compresses) is within it; a negative count is none.
        #expect(memory.crossed(onTheWire: allowed + 1, decoded: .max) == nil)
        #expect(memory.crossed(onTheWire: allowed + 1, decoded: -1) == .responseBody(limit: 1 << 20))
        let file = ResponseBodyLimit(toFile: true, limits: Limits(maxDownloadBytes: 0))
        #expect(file.crossed(onTheWire: 1_024, decoded: 0) == nil)
        #expect(file.crossed(onTheWire: 1_025, decoded: 0) == .downloadBody(limit: 0))
        let stream = ResponseBodyLimit(streaming: .default)
        #expect(stream.crossed(onTheWire: .max, decoded: 0) == nil)
        let unlimited = ResponseBodyLimit(toFile: false, limits: Limits(maxResponseBytes: .max))
        #expect(unlimited.crossed(onTheWire: .max, decoded: 0) == nil)
    }

    @Test func aFileBodyIsKeptBy307AndDroppedWhenTheRequestBecomesGet() throws {
        let file = URL(fileURLWithPath: "/tmp/upload.bin")
        let kept = try #require(
            try Self.transfer(body: .file(file)).following(redirect: Self.redirect(307, to: "/up"), redirects: 0))
        #expect(kept.body == .file(file))
        let dropped = try #require(
            try Self.transfer(body: .file(file)).following(redirect: Self.redirect(303, to: "/done"), redirects: 0))
        #expect(dropped.body == .inRequest)
    }

    /// A body stream was read by the first hop: a hop that would repeat it is refused, one that
    /// becomes a GET drops it (found by review).
    @Test(arguments: [(307, "POST"), (308, "PUT"), (301, "PUT"), (302, "PATCH")])
    func aBodyStreamIsNeverRepeated(status: Int, method: String) throws {
        var transfer = Self.transfer(method: method)
        transfer.request.httpBody = nil
        transfer.request.httpBodyStream = InputStream(data: Data("once".utf8))
        #expect {
            _ = try transfer.following(redirect: Self.redirect(status, to: "/v2"), redirects: 0)
        } throws: { error in
            guard case CourierError.underlying(let underlying, _) = error else { return false }
            return (underlying as? URLError)?.code == .requestBodyStreamExhausted
        }
        transfer.request.httpMethod = "POST"
        let get = try #require(try transfer.following(redirect: Self.redirect(303, to: "/done"), redirects: 0))
        #expect(get.request.httpMethod == "GET")
        #expect(get.request.httpBodyStream == nil)
    }

    @Test(arguments: ["https://other.example.com/x", "http://api.example.com/x", "https://api.example.com:8443/x"])
    func anotherOriginLosesTheCredentials(location: String) throws {
        // To http only when allowed, and without a body (a 302 after a POST becomes a GET).
        let insecure = location.hasPrefix("http:")
        let transfer = Self.transfer(limits: Limits(allowsInsecureRedirects: insecure))
        let next = try #require(
            try transfer.following(redirect: Self.redirect(insecure ? 302 : 307, to: location), redirects: 0))
        #expect(next.request.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(next.request.value(forHTTPHeaderField: "Cookie") == nil)
        #expect(next.request.value(forHTTPHeaderField: "X-Keep") == "1")
    }

    @Test func answersThatAreNotRedirectsAreReturnedAsTheyAre() throws {
        for (status, location) in [(200, "/x"), (300, "/x"), (304, "/x"), (305, "/x"), (302, nil)] as [(Int, String?)] {
            #expect(try Self.transfer().following(redirect: Self.redirect(status, to: location), redirects: 0) == nil)
        }
    }

    @Test func anEmptyLocationIsTheSameURL() throws {
        let next = try #require(try Self.transfer().following(redirect: Self.redirect(307, to: ""), redirects: 0))
        #expect(next.request.url == Self.origin)
    }

    @Test func theLimitAndTheSchemesAreEnforced() throws {
        let limits = Limits(maxRedirects: 2)
        #expect(
            try Self.transfer(limits: limits).following(redirect: Self.redirect(302, to: "/a"), redirects: 1) != nil)
        #expect {
            try Self.transfer(limits: limits).following(redirect: Self.redirect(302, to: "/a"), redirects: 2)
        } throws: { error in
            guard case .underlying(let underlying, nil) = error as? CourierError else { return false }
            return (underlying as? URLError)?.code == .httpTooManyRedirects
        }
        for location in ["ftp://api.example.com/x", "file:///etc/passwd"] {
            #expect {
                try Self.transfer().following(redirect: Self.redirect(302, to: location), redirects: 0)
            } throws: { error in
                guard case .schemeNotAllowed(let url) = error as? CourierError else { return false }
                return url.absoluteString == location
            }
        }
    }

    @Test func theDefaultLimitIsTwentyRedirects() throws {
        #expect(Limits.default.maxRedirects == 20)
        #expect(try Self.transfer().following(redirect: Self.redirect(302, to: "/a"), redirects: 19) != nil)
        #expect {
            try Self.transfer().following(redirect: Self.redirect(302, to: "/a"), redirects: 20)
        } throws: { error in
            guard case .underlying(let underlying, nil) = error as? CourierError else { return false }
            return (underlying as? URLError)?.code == .httpTooManyRedirects
        }
    }

    @Test func theDestinationIsChecked() throws {
        try Self.transfer().checkDestination()
        var transfer = Self.transfer()
        transfer.request.url = URL(string: "gopher://api.example.com/")
        #expect(throws: CourierError.self) { try transfer.checkDestination() }
        transfer.request.url = URL(string: "http:///no-host")
        #expect(throws: CourierError.self) { try transfer.checkDestination() }
    }

    /// The provider's mark that it checked the first hop's destination (issue 29) is cleared by any
    /// change to the request or the limits, and a redirect's hop never carries it.
    @Test func theCheckedMarkIsClearedByAnyChange() throws {
        var refused = URLRequest(url: try #require(URL(string: "gopher://api.example.com/")))
        refused.httpMethod = "GET"
        var marked = Transfer(request: refused)
        marked.destinationChecked = true
        // Only the provider marks a transfer, right after checking the same request and limits.
        try marked.checkDestination()
        var changed = marked
        changed.request.httpBody = Data("x".utf8)
        #expect(!changed.destinationChecked)
        #expect(throws: CourierError.self) { try changed.checkDestination() }
        changed = marked
        changed.request.url = URL(string: "gopher://other.example.com/")
        #expect(throws: CourierError.self) { try changed.checkDestination() }
        var allowed = Self.transfer()
        allowed.destinationChecked = true
        allowed.limits.allowedSchemes = ["wss"]
        #expect(!allowed.destinationChecked)
        #expect(throws: CourierError.self) { try allowed.checkDestination() }
        allowed = Self.transfer()
        allowed.destinationChecked = true
        let next = try #require(try allowed.following(redirect: Self.redirect(307, to: "/next"), redirects: 0))
        #expect(!next.destinationChecked)
    }

    /// A transport sees the first hop marked when the provider checked that very request, and
    /// unmarked when the request came from the HTTP cache (which may add its validators); a
    /// transport that changes the request to a scheme not allowed is refused by
    /// `checkDestination()`.
    @Test func theProviderMarksOnlyTheRequestItChecked() async throws {
        struct Target: TargetType {
            var task: HTTPTask
            var method: HTTPMethod
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "items" }
            var headers: [String: String] { [:] }
        }
        let marks = Locked<[Bool]>([])
        let recording = MarkTransport(marks: marks, rewrite: nil)
        let provider = Provider<Target>(transport: recording)
        _ = try await provider.request(Target(task: .plain, method: .get))
        let cached = Provider<Target>(transport: recording, cache: HTTPCache(storage: MemoryCacheStorage()))
        _ = try await cached.request(Target(task: .plain, method: .get))
        #expect(marks.withLock { $0 } == [true, false])

        let rewriting = Provider<Target>(transport: MarkTransport(marks: marks, rewrite: "gopher://api.example.com/"))
        await #expect {
            try await rewriting.request(Target(task: .plain, method: .get))
        } throws: { error in
            guard case .schemeNotAllowed = error as? CourierError else { return false }
            return true
        }
    }

    @Test func fileBodySizesAreChecked() throws {
        #expect(try Self.transfer().fileBodySize() == nil)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("body.bin")
        try Data(repeating: 7, count: 1234).write(to: file)
        #expect(try Self.transfer(body: .file(file)).fileBodySize() == 1234)
        #expect(throws: FileBodyFailure.notARegularFile(folder)) {
            try Self.transfer(body: .file(folder)).fileBodySize()
        }
    }

    @Test func bodyLimitsCountDecodedBytes() throws {
        let head = Response(
            statusCode: 200, data: Data(), request: nil, url: Self.origin,
            headerFields: [("Content-Length", "10000"), ("content-encoding", "gzip")])
        var memory = ResponseBodyLimit(
            for: Transfer(request: URLRequest(url: Self.origin), limits: Limits(maxResponseBytes: 5000)))
        #expect(memory.announcedCrossing(head) == .responseBody(limit: 5000))
        #expect(memory.crossed(by: 5000, head: head) == nil)
        #expect(memory.crossed(by: 5001, head: head) == .responseBody(limit: 5000))
        // The ratio applies past 1 MiB: 10,000 compressed bytes may decode to 2,000,000 (×200).
        var stream = ResponseBodyLimit(streaming: .default)
        #expect(stream.crossed(by: 1 << 20, head: head) == nil)
        #expect(stream.crossed(by: 2_000_000, head: head) == nil)
        #expect(stream.crossed(by: 2_000_001, head: head) == .decompressionRatio(limit: 200))
        let download = ResponseBodyLimit(
            for: Transfer(
                request: URLRequest(url: Self.origin), destination: .file(URL(fileURLWithPath: "/tmp/x")),
                limits: Limits(maxDownloadBytes: 100)))
        #expect(download.announcedCrossing(head) == .downloadBody(limit: 100))
    }

    /// Apple's URLSession may report `expectedContentLength` as -1 for a compressed body; the
    /// limits read the `Content-Length` header the server sent.
    final class CompressedBodyResponse: HTTPURLResponse, @unchecked Sendable {
        // Immutable after init, like its superclass.
        override var expectedContentLength: Int64 { -1 }
    }

    @Test func limitsReadContentLengthFromTheHeaderNotExpectedContentLength() throws {
        let response = try #require(
            CompressedBodyResponse(
                url: Self.origin, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["Content-Length": "10000", "Content-Encoding": "gzip"]))
        #expect(response.expectedContentLength == -1)
        #expect(ResponseBodyLimit.contentLength(of: response) == 10000)
        var limit = ResponseBodyLimit(toFile: false, limits: .default)
        #expect(limit.announcedCrossing(contentLength: ResponseBodyLimit.contentLength(of: response)) == nil)
        #expect(limit.crossed(by: 2_000_000, response: response) == nil)
        #expect(limit.crossed(by: 2_000_001, response: response) == .decompressionRatio(limit: 200))
        let small = ResponseBodyLimit(toFile: false, limits: Limits(maxResponseBytes: 5000))
        #expect(small.announcedCrossing(contentLength: 10000) == .responseBody(limit: 5000))
        #expect(SessionRouter.expectedLength(of: response, method: "GET") == nil)  // encoded: the total is unknown
        let plain = try #require(
            CompressedBodyResponse(
                url: Self.origin, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": "42"]))
        #expect(SessionRouter.expectedLength(of: plain, method: nil) == 42)
        let built = Response(statusCode: 200, data: Data(), request: nil, response: response)
        #expect(built.expectedContentLength == 10000)
    }

    /// The one `Content-Encoding` check both transports announce progress through.
    @Test(arguments: [
        (Int64(42), String?.none, Int64?.some(42)), (42, "", 42), (42, "identity", 42), (42, "IDENTITY", 42),
        (42, "gzip", nil), (42, "br", nil), (-1, nil, nil), (-1, "gzip", nil),
        // Read as a list (ContentCoding.list): identity and empty members name no coding.
        (42, "identity, identity", 42), (42, " , ", 42), (42, "identity, gzip", nil), (42, "gzip, identity", nil),
    ])
    func theExpectedLengthIgnoresAnEncodedBodysLength(length: Int64, encoding: String?, expected: Int64?) {
        #expect(ResponseBodyLimit.expectedLength(contentLength: length, contentEncoding: encoding) == expected)
    }

    /// What progress announces when the answer's head arrives: nothing to come for an answer
    /// that has no body, whatever its head says; otherwise the length above.
    @Test(arguments: [
        (200, String?.some("GET"), String?.some("42"), String?.none, Int64?.some(42)), (200, "HEAD", "42", nil, 0),
        (200, "head", "42", "gzip", 0),
        (204, "GET", "42", nil, 0), (304, "GET", "42", "gzip", 0), (103, "GET", nil, nil, 0),
        (200, nil, "42", "gzip", nil), (200, "GET", nil, nil, nil), (205, "GET", "3", nil, 3),
        (404, "POST", "7", nil, 7),
    ])
    func theLengthAnnouncedAtTheHeadIsNoneForAnAnswerWithoutABody(
        status: Int, method: String?, length: String?, encoding: String?, expected: Int64?
    ) throws {
        var fields: [(String, String)] = []
        if let length { fields.append(("Content-Length", length)) }
        if let encoding { fields.append(("Content-Encoding", encoding)) }
        let head = Response(
            statusCode: status, data: Data(), request: nil, url: Self.origin, httpVersion: "HTTP/1.1",
            headerFields: fields)
        #expect(ResponseBodyLimit.expectedLength(of: head, method: method) == expected)
        #expect(ResponseBodyLimit.hasNoBody(status: status, method: method) == (expected == 0))
        // URLSessionTransport reads the same from Foundation's head.
        let http = try #require(
            HTTPURLResponse(
                url: Self.origin, statusCode: status, httpVersion: "HTTP/1.1",
                headerFields: Dictionary(fields, uniquingKeysWith: { first, _ in first })))
        #expect(SessionRouter.expectedLength(of: http, method: method) == expected)
    }

    @Test func aHeadFromTheWireAnswersWithoutBuildingFoundationsResponse() throws {
        let head = Response(
            statusCode: 201, data: Data("body".utf8), request: nil, url: Self.origin, httpVersion: "HTTP/2",
            headerFields: [("Set-Cookie", "a=1"), ("content-type", "application/json"), ("set-cookie", "b=2")])
        #expect(head.statusCode == 201)
        #expect(head.value(forHTTPHeaderField: "SET-COOKIE") == "a=1, b=2")
        #expect(head.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(head.value(forHTTPHeaderField: "X-Missing") == nil)
        let built = try #require(head.response)
        #expect(built.statusCode == 201)
        #expect(built.url == Self.origin)
        #expect(built.value(forHTTPHeaderField: "set-cookie") == "a=1, b=2")
        // Built once: every reader gets the same object.
        #expect(head.response === built)
        let withBody = head.withBody(Data("other".utf8), transferMetrics: TransferMetrics(bytesReceived: 5))
        #expect(withBody.data == Data("other".utf8))
        #expect(withBody.response === built)
        #expect(withBody.transferMetrics?.bytesReceived == 5)
    }

    /// A body added before the head's `HTTPURLResponse` is built: each response builds its own
    /// when first read (the same status, URL and fields), once each; a moved copy made after a
    /// build keeps it.
    @Test func aBodyAddedBeforeTheBuildBuildsItsOwnOnce() throws {
        let head = Response(
            statusCode: 200, data: Data(), request: nil, url: Self.origin,
            headerFields: [("Content-Type", "text/plain"), ("X-N", "1")])
        let whole = head.withBody(Data("body".utf8))
        let fromWhole = try #require(whole.response)
        #expect(whole.response === fromWhole)
        let fromHead = try #require(head.response)
        #expect(head.response === fromHead)
        #expect(fromHead.statusCode == fromWhole.statusCode)
        #expect(fromHead.url == fromWhole.url)
        #expect(fromHead.value(forHTTPHeaderField: "x-n") == "1")
        #expect(fromWhole.value(forHTTPHeaderField: "x-n") == "1")
        let moved = whole.moved(to: URL(fileURLWithPath: "/tmp/courier-moved-nothing-written"))
        #expect(moved.response === fromWhole)
    }

    @Test func readersRacingForTheHeadAllGetOneObject() async throws {
        for _ in 0..<50 {
            let head = Response(
                statusCode: 200, data: Data(), request: nil, url: Self.origin,
                headerFields: [("Content-Type", "text/plain"), ("X-N", "1")])
            let ids = await headObjectsSeenByRacingReaders(of: head)
            #expect(ids.count == 1)
            #expect(ids.first ?? nil != nil)
        }
    }

    /// FoundationNetworking's `.unknown` for a body cut short of a known `Content-Length` is
    /// reported as `.networkConnectionLost` (what Apple's URLSession and AsyncHTTPClient report, and
    /// what the default retry policy retries); nothing else is renamed.
    @Test func aBodyCutShortOfItsLengthIsALostConnection() throws {
        func response(_ fields: [String: String], status: Int = 200) -> HTTPURLResponse? {
            HTTPURLResponse(url: Self.origin, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)
        }
        let cases: [(any Error, HTTPURLResponse?, Int64, URLError.Code)] = [
            (URLError(.unknown), response(["Content-Length": "1000"]), 100, .networkConnectionLost),
            // Transfer-Encoding overrides Content-Length (RFC 9112 §6.3): a malformed chunked body.
            (URLError(.unknown), response(["Content-Length": "1000", "Transfer-Encoding": "chunked"]), 0, .unknown),
            // Answers that carry no body whatever their Content-Length says (RFC 9110 §6.4.1).
            (URLError(.unknown), response(["Content-Length": "1000"], status: 304), 0, .unknown),
            (URLError(.unknown), response(["Content-Length": "1000"], status: 204), 0, .unknown),
            (URLError(.unknown), response(["Content-Length": "1000"]), 1000, .unknown),  // all arrived
            (URLError(.unknown), response([:]), 100, .unknown),  // chunked: a cut or a malformed body
            (URLError(.unknown), response(["Content-Length": "1000", "Content-Encoding": "gzip"]), 100, .unknown),
            (URLError(.unknown), nil, 0, .unknown),  // no head: not a body cut short
            (URLError(.timedOut), response(["Content-Length": "1000"]), 100, .timedOut),
        ]
        for (error, head, received, expected) in cases {
            let mapped = SessionRouter.cutShort(error, response: head, received: received, method: "GET")
            #expect((mapped as? URLError)?.code == expected, "\(head?.allHeaderFields ?? [:]) \(received)")
        }
        // A HEAD answer has no body: nothing of its Content-Length was ever to arrive.
        let head = SessionRouter.cutShort(
            URLError(.unknown), response: response(["Content-Length": "1000"]), received: 0, method: "HEAD")
        #expect((head as? URLError)?.code == .unknown)
    }
}

/// Records whether each transfer came marked as checked, optionally rewrites its URL first, then
/// checks its destination and answers 200.
private struct MarkTransport: Transport {
    let marks: Locked<[Bool]>
    let rewrite: String?

    func send(_ transfer: Transfer) async throws -> Response {
        var transfer = transfer
        marks.withLock { $0.append(transfer.destinationChecked) }
        if let rewrite { transfer.request.url = URL(string: rewrite) }
        try transfer.checkDestination()
        return try await transfer.sendBuffered { request in
            Response(statusCode: 200, data: Data("{}".utf8), request: request)
        }
    }
}
