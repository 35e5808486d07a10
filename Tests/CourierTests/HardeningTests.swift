import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Careless input: every class of hostile or mistaken input gets a typed error before anything is
/// sent, never a crash or a hang.
@Suite struct CarelessInputTests {
    struct Path: TargetType {
        var headers: [String: String] { [:] }
        var path: String
        var baseURL: URL { URL(string: "https://api.example.com/api/v1")! }
    }

    @Test(arguments: [
        "users/../../admin", "..", "../x", "a/./b", ".", "%2e%2e/admin", "a/%2E%2e", "a/..%2F..", "..\\admin",
        "a\\..\\b", "x/.",
    ])
    func dotSegmentsNeverLeaveTheBasePath(path: String) {
        #expect {
            try Endpoint(target: Path(path: path)).urlRequest()
        } throws: { error in
            guard case CourierError.requestMapping(let reason) = error else { return false }
            return reason.contains("segment")
        }
    }

    @Test(arguments: ["a..b/c", "..a", "a.", "v1.2/items", "%2e%2ex", "search?q=../x"])
    func dotsInsideSegmentsAreFine(path: String) throws {
        let url = try #require(try Endpoint(target: Path(path: path)).urlRequest().url)
        #expect(url.host == "api.example.com")
        #expect(url.path.hasPrefix("/api/v1/"))
    }

    /// A plugin's `prepare` can change anything; the request is checked again after it.
    struct Rewrite: Plugin {
        let change: @Sendable (inout URLRequest) -> Void
        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            var request = request
            change(&request)
            return request
        }
    }

    @Test(arguments: [
        "X-Evil\r\nX-Injected", "X Space", "", "Bad:Colon",
    ])
    func headerNamesSetByPluginsAreChecked(name: String) async {
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            transport: transport, plugins: [Rewrite { $0.addValue("1", forHTTPHeaderField: name) }])
        await #expect {
            try await provider.request(.plain)
        } throws: { error in
            guard case CourierError.requestMapping = error else { return false }
            return true
        }
        #expect(transport.sent.isEmpty)
    }

    @Test(arguments: ["GET /x HTTP/1.1\r\nX: 1", "GET /x", "PO ST", "G\0ET"])
    func methodsSetByPluginsAreChecked(method: String) async {
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(transport: transport, plugins: [Rewrite { $0.httpMethod = method }])
        await #expect {
            try await provider.request(.plain)
        } throws: { error in
            guard case CourierError.requestMapping(let reason) = error else { return false }
            return reason.contains("method")
        }
        #expect(transport.sent.isEmpty)
    }

    @Test func requestMappingOutputIsChecked() async {
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            requestClosure: { endpoint in
                var request = try endpoint.urlRequest()
                request.httpMethod = "GET\r\nX-Smuggled: 1"
                return request
            }, transport: transport)
        await #expect(throws: CourierError.self) { try await provider.request(.plain) }
        #expect(transport.sent.isEmpty)
    }

    struct Signer: Authenticator {
        func apply(_ credential: String, to request: inout URLRequest) {
            request.httpMethod = credential
        }
        func refresh(_ credential: String) async throws -> String { credential }
    }

    @Test func signedRequestsAreChecked() async {
        let transport = RecordingTransport()
        let provider = Provider<TestAPI>(
            transport: transport, authentication: Authentication(Signer(), credential: "GET\r\nX: 1"))
        await #expect(throws: CourierError.self) { try await provider.request(.plain) }
        #expect(transport.sent.isEmpty)
    }

    struct Authorized: TargetType, AccessTokenAuthorizable {
        var headers: [String: String] { [:] }
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "me" }
        var authorizationType: AuthorizationType? { .bearer }
    }

    /// URLRequest drops a header value with CR/LF without a word; the token plugin refuses it.
    @Test func accessTokensWithLineBreaksAreRefused() async {
        let transport = RecordingTransport()
        let provider = Provider<Authorized>(transport: transport, plugins: [.accessToken { _ in "abc\r\nX-Evil: 1" }])
        await #expect {
            try await provider.request(Authorized())
        } throws: { error in
            guard case CourierError.requestMapping = error else { return false }
            return true
        }
        #expect(transport.sent.isEmpty)
    }

    struct Other: TargetType {
        var headers: [String: String] { [:] }
        var baseURL: URL
        var path: String { "x" }
        var limits: Limits? = nil
    }

    @Test(arguments: ["ftp://127.0.0.1/x", "file:///etc", "gopher://h/", "ws://h/"])
    func onlyAllowedSchemesAreSent(base: String) async {
        let transport = RecordingTransferTransport(wrapping: RecordingTransport())
        let provider = Provider<Other>(transport: transport)
        await #expect {
            try await provider.request(Other(baseURL: URL(string: base)!))
        } throws: { error in
            guard case CourierError.schemeNotAllowed(let url) = error else { return false }
            return url.scheme == URL(string: base)?.scheme
        }
        #expect(transport.transfers.isEmpty)
    }

    @Test func allowedSchemesAreASetting() async throws {
        let transport = RecordingTransport()
        let httpsOnly = Limits(allowedSchemes: ["HTTPS"])
        let provider = Provider<Other>(transport: transport, limits: httpsOnly)
        await #expect(throws: CourierError.self) {
            try await provider.request(Other(baseURL: URL(string: "http://api.example.com")!))
        }
        _ = try await provider.request(Other(baseURL: URL(string: "https://api.example.com")!))
        // A target's own limits replace the provider's.
        _ = try await provider.request(
            Other(baseURL: URL(string: "http://api.example.com")!, limits: Limits(allowedSchemes: ["http"])))
        #expect(transport.sent.count == 2)
    }

    /// Trees far deeper than any API nests: a typed error, no stack overflow. (Deeper than about
    /// 10,000 levels, Swift's own recursive release of the caller's value overflows a task's stack
    /// before Courier is involved, so the tests stop at 5,000.)
    static func nested(_ depth: Int) -> ParameterValue {
        var value: ParameterValue = "leaf"
        for level in 0..<depth { value = level.isMultiple(of: 2) ? [value] : ["k": value] }
        return value
    }

    @Test(arguments: [ParameterEncoding.url, .json, .queryString])
    func deepParametersAreATypedError(encoding: ParameterEncoding) {
        struct Deep: TargetType {
            var headers: [String: String] { [:] }
            let encoding: ParameterEncoding
            let value: ParameterValue
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "deep" }
            var method: HTTPMethod { .post }
            var task: HTTPTask { .parameters(["root": value], encoding: encoding) }
        }
        for depth in [65, 1_000, 5_000] {
            #expect {
                try Endpoint(target: Deep(encoding: encoding, value: Self.nested(depth))).urlRequest()
            } throws: { error in
                guard case CourierError.limitExceeded(.parameterDepth(let limit)) = error else { return false }
                return limit == ParameterValue.maximumDepth
            }
        }
        #expect(throws: Never.self) {
            try Endpoint(target: Deep(encoding: encoding, value: Self.nested(ParameterValue.maximumDepth - 1)))
                .urlRequest()
        }
    }

    @Test func deepURLParametersOfOtherTasksAreChecked() {
        struct Deep: TargetType {
            var headers: [String: String] { [:] }
            var baseURL: URL { URL(string: "https://api.example.com")! }
            var path: String { "deep" }
            var method: HTTPMethod { .post }
            var task: HTTPTask { .compositeData(Data(), urlParameters: ["q": CarelessInputTests.nested(5_000)]) }
        }
        #expect(throws: CourierError.self) { try Endpoint(target: Deep()).urlRequest() }
    }

    @Test func retryArithmeticSaturates() {
        let policies = [
            RetryPolicy(maxAttempts: 1_000, baseDelay: .seconds(Int64.max / 4), multiplier: 1e300, jitter: .none),
            RetryPolicy(
                maxAttempts: 1_000, baseDelay: .seconds(1), multiplier: .infinity, maxDelay: .seconds(Int64.max)),
            RetryPolicy(maxAttempts: 1_000, baseDelay: .seconds(1), multiplier: .nan, maxDelay: .seconds(Int64.max)),
            RetryPolicy(maxAttempts: 1_000, baseDelay: .seconds(-5), multiplier: 2, maxDelay: .seconds(-1)),
            RetryPolicy(
                maxAttempts: Int.max, baseDelay: .seconds(Int64.max), multiplier: 1e308, maxDelay: .seconds(Int64.max)),
        ]
        let request = URLRequest(url: URL(string: "https://api.example.com")!)
        let failure = CourierError.underlying(URLError(.timedOut), nil)
        for policy in policies {
            for attempt in [1, 2, 64, 1_000, 999] {
                if case .retry(let delay) = policy.decision(after: failure, request: request, attempt: attempt) {
                    #expect(delay >= .zero)
                    #expect(delay <= max(.zero, policy.maxDelay))
                }
            }
        }
    }

    @Test(arguments: [
        "99999999999999999999999999", "9223372036854775807", "0", "-5", "1e400", "Fri, 31 Dec 9999 23:59:59 GMT",
    ])
    func retryAfterSaturates(header: String) {
        let policy = RetryPolicy(maxDelay: .seconds(Int64.max))
        let response = Response(
            statusCode: 503, data: Data(), request: nil,
            response: HTTPURLResponse(
                url: URL(string: "https://a.example")!, statusCode: 503, httpVersion: nil,
                headerFields: ["Retry-After": header]))
        let decision = policy.decision(
            after: .statusCode(response), request: URLRequest(url: URL(string: "https://a.example")!), attempt: 1)
        guard case .retry(let delay) = decision else {
            Issue.record("expected a retry")
            return
        }
        #expect(delay >= .zero)
    }
}

/// Files given as bodies: only regular files of a stable size, read off Swift's thread pool.
@Suite struct FileBodyTests {
    struct Upload: TargetType {
        var headers: [String: String] { [:] }
        var task: HTTPTask
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "upload" }
        var method: HTTPMethod { .post }
    }

    /// A FIFO in a folder of its own; `remove()` first unblocks any reader left waiting on it (by
    /// opening and closing the writing end), then removes the folder.
    struct FIFO {
        let url: URL
        let folder: TemporaryFolder

        init() throws {
            folder = try TemporaryFolder()
            url = folder.url.appendingPathComponent("pipe")
            #expect(mkfifo(url.path, 0o600) == 0)
        }

        func remove() {
            let writer = open(url.path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            folder.remove()
        }
    }

    @Test func nonRegularFilesAreRefusedBeforeSending() async throws {
        let fifo = try FIFO()
        defer { fifo.remove() }
        var candidates = [URL(fileURLWithPath: "/dev/zero"), fifo.folder.url, fifo.url]
        #if os(Linux)
            candidates.append(URL(fileURLWithPath: "/proc/self/status"))
        #endif
        for url in candidates {
            let transport = RecordingTransferTransport(wrapping: RecordingTransport())
            let provider = Provider<Upload>(transport: transport)
            await #expect(throws: CourierError.self, "\(url.path)") {
                try await provider.request(Upload(task: .uploadFile(url)))
            }
            await #expect(throws: CourierError.self, "\(url.path) as a part") {
                try await provider.request(
                    Upload(task: .uploadMultipart(MultipartFormData(parts: [.init(name: "f", fileURL: url)]))))
            }
            #expect(transport.transfers.isEmpty)
        }
    }

    /// Two stream parts that block (a FIFO with no writer) no longer freeze the process: the
    /// deadline answers both callers, and other work goes on meanwhile.
    @Test func blockingStreamPartsHonourDeadlines() async throws {
        let fifo = try FIFO()
        defer { fifo.remove() }
        let pipe = fifo.url
        let clock = TestClock()
        let provider = Provider<Upload>(transport: RecordingTransport(), clock: clock, timeout: .seconds(5))
        let form = MultipartFormData(parts: [
            .init(name: "a", stream: { InputStream(url: pipe) }, length: 10)
        ])
        let requests = (0..<2).map { _ in
            Task { try await provider.request(Upload(task: .uploadMultipart(form))) }
        }
        await clock.waitForSleepers(1)
        // The cooperative pool still runs other work.
        let other = await Task.detached { (1...1000).reduce(0, +) }.value
        #expect(other == 500_500)
        clock.advance(by: .seconds(5))
        for request in requests {
            guard case .timedOut = (await request.result).failure as? CourierError else {
                Issue.record("expected timedOut")
                continue
            }
        }
    }

    @Test func blockingStreamPartsHonourCancellation() async throws {
        let fifo = try FIFO()
        defer { fifo.remove() }
        let pipe = fifo.url
        let gate = StageGate()
        let provider = Provider<Upload>(transport: RecordingTransport(), plugins: [GateAfterPrepare(gate: gate)])
        let form = MultipartFormData(parts: [.init(name: "a", stream: { InputStream(url: pipe) }, length: 10)])
        let request = Task { try await provider.request(Upload(task: .uploadMultipart(form))) }
        await gate.waitForArrivals(1)
        gate.open()
        // The stream part now blocks on a dispatch thread; the cancel still answers at once.
        request.cancel()
        guard case .cancelled = (await request.result).failure as? CourierError else {
            Issue.record("expected cancelled")
            return
        }
    }

    struct GateAfterPrepare: Plugin {
        let gate: StageGate
        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            try await gate.pass()
            return request
        }
    }

    /// Grows a file after the request (and its Content-Length) was built, before the body is.
    struct Grow: Plugin {
        let file: URL
        func prepare(_ request: URLRequest, context: RequestContext) async throws -> URLRequest {
            let handle = try FileHandle(forWritingTo: file)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("678".utf8))
            try handle.close()
            return request
        }
    }

    @Test(arguments: [100, 0])
    func aFilePartThatChangesSizeBeforeItIsSentIsATypedError(memoryThreshold: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("grow.txt", contents: Data("12345".utf8))
        let form = MultipartFormData(parts: [.init(name: "f", fileURL: file)], memoryThreshold: memoryThreshold)
        let transport = RecordingTransferTransport(wrapping: RecordingTransport())
        let provider = Provider<Upload>(transport: transport, plugins: [Grow(file: file)])
        await #expect {
            try await provider.request(Upload(task: .uploadMultipart(form)))
        } throws: { error in
            guard case CourierError.multipartEncoding(let underlying) = error,
                case .sizeChanged = underlying as? MultipartFailure
            else { return false }
            return true
        }
        #expect(transport.transfers.isEmpty)
    }
}

/// Downloads: only regular files are ever replaced; the move cannot be redirected by a link;
/// nothing is left behind in the temporary folder.
@Suite struct DownloadSafetyTests {
    struct Download: TargetType {
        var headers: [String: String] { [:] }
        var destination: DownloadDestination
        var timeout: Duration? = nil
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "file" }
        var task: HTTPTask { .download(destination) }
        var sampleData: Data { Data("downloaded".utf8) }
    }

    @Test func aFolderInTheWayIsNeverDeleted() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let precious = folder.url.appendingPathComponent("report.pdf")
        try FileManager.default.createDirectory(at: precious, withIntermediateDirectories: true)
        _ = try folder.file("report.pdf/keep.txt", contents: Data("keep".utf8))
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        await #expect {
            try await provider.request(
                Download(destination: .folder(folder.url, options: [.removePreviousFile]) { _, _ in "report.pdf" }))
        } throws: { error in
            guard case CourierError.downloadDestination(let underlying) = error,
                case .notARegularFile(let url) = underlying as? DownloadFailure
            else { return false }
            return url.standardizedFileURL.path == precious.standardizedFileURL.path
        }
        #expect(FileManager.default.fileExists(atPath: precious.appendingPathComponent("keep.txt").path))
    }

    @Test func aLinkInTheWayIsNeverReplaced() async throws {
        let folder = try TemporaryFolder()
        let outside = try TemporaryFolder()
        defer {
            folder.remove()
            outside.remove()
        }
        let target = try outside.file("target.txt", contents: Data("original".utf8))
        let link = folder.url.appendingPathComponent("name.txt")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        for options: DownloadDestination.Options in [[], [.removePreviousFile]] {
            await #expect(throws: CourierError.self) {
                try await provider.request(
                    Download(destination: .folder(folder.url, options: options) { _, _ in "name.txt" }))
            }
        }
        #expect(try Data(contentsOf: target) == Data("original".utf8))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
    }

    @Test func aRegularFileIsReplacedOnlyWhenAsked() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let existing = try folder.file("a.txt", contents: Data("old".utf8))
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        await #expect(throws: CourierError.self) {
            try await provider.request(Download(destination: .folder(folder.url, options: []) { _, _ in "a.txt" }))
        }
        #expect(try Data(contentsOf: existing) == Data("old".utf8))
        _ = try await provider.request(
            Download(destination: .folder(folder.url, options: [.removePreviousFile]) { _, _ in "a.txt" }))
        #expect(try Data(contentsOf: existing) == Data("downloaded".utf8))
    }

    /// A folder on the way swapped for a link to elsewhere while downloads land: none lands outside.
    @Test func swappingAFolderForALinkNeverLetsAFileOut() async throws {
        let folder = try TemporaryFolder()
        let outside = try TemporaryFolder()
        defer {
            folder.remove()
            outside.remove()
        }
        let sub = folder.url.appendingPathComponent("sub")
        let provider = Provider<Download>(stubClosure: Provider.immediatelyStub)
        // The swapper runs on a thread of its own, never on Swift's cooperative pool, so the rest
        // of the parallel suite keeps running meanwhile.
        let stop = Locked(false)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var flips = 0
            while !stop.withLock({ $0 }), flips < 100_000 {
                flips += 1
                try? FileManager.default.removeItem(at: sub)
                if flips.isMultiple(of: 2) {
                    try? FileManager.default.createSymbolicLink(at: sub, withDestinationURL: outside.url)
                } else {
                    try? FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
                }
            }
            done.signal()
        }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    _ = try? await provider.request(
                        Download(
                            destination: .folder(folder.url, options: [.createIntermediateDirectories]) { _, _ in
                                "sub/\(index).txt"
                            }))
                }
            }
        }
        stop.withLock { $0 = true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                done.wait()
                continuation.resume()
            }
        }
        #expect(outside.contents.isEmpty)
    }

    /// A transport that writes the download, then answers only once the test lets it, ignoring
    /// cancellation: the deadline passes "as the body completes".
    final class LateDownloadTransport: Transport {
        let gate = StageGate()
        let written = Locked<URL?>(nil)

        func send(_ transfer: Transfer) async throws -> Response {
            guard case .file(let url) = transfer.destination else { throw URLError(.badURL) }
            try Data("body".utf8).write(to: url)
            written.withLock { $0 = url }
            await Task { try? await gate.pass() }.value
            return Response(statusCode: 200, data: Data(), request: transfer.request, response: nil, fileURL: url)
        }
    }

    @Test func aDeadlineAsTheBodyCompletesLeavesNoFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = TestClock()
        let transport = LateDownloadTransport()
        let provider = Provider<Download>(transport: transport, clock: clock)
        let request = Task {
            try await provider.request(
                Download(destination: .suggestedFileName(in: folder.url), timeout: .seconds(1)))
        }
        await transport.gate.waitForArrivals(1)
        clock.advance(by: .seconds(1))
        guard case .timedOut = (await request.result).failure as? CourierError else {
            Issue.record("expected timedOut")
            return
        }
        let temporary = try #require(transport.written.withLock { $0 })
        transport.gate.open()
        // The late answer is dropped and its file removed.
        #expect(await eventually { !fileExists(temporary) })
        #expect(folder.contents.isEmpty)
    }
}

/// Waiting points answer a cancelled caller at once; deadlines cover the whole call and release
/// their memory when the request ends.
@Suite struct WaitingPointTests {
    /// Refreshes wait on a gate, so a test can hold one open.
    struct SlowRefresh: Authenticator {
        let gate: StageGate
        let refreshes: Locked<Int>
        let cancelledRefreshes: Locked<Int>
        func apply(_ credential: String, to request: inout URLRequest) {
            request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        }
        func refresh(_ credential: String) async throws -> String {
            refreshes.withLock { $0 += 1 }
            do {
                try await gate.pass()
            } catch {
                cancelledRefreshes.withLock { $0 += 1 }
                throw error
            }
            return "fresh"
        }
    }

    /// Answers 401 to the stale credential and 200 to the fresh one.
    static func transport() -> RecordingTransport {
        RecordingTransport { request in
            let fresh = request.value(forHTTPHeaderField: "Authorization") == "Bearer fresh"
            return Response(statusCode: fresh ? 200 : 401, data: Data(), request: request)
        }
    }

    /// A provider whose credential refresh waits on `gate`; `cancelled` counts refreshes that
    /// ended by cancellation.
    static func slowRefresh(
        gate: StageGate, cancelled: Locked<Int>
    ) -> (Provider<TestAPI>, Authentication<SlowRefresh>) {
        let auth = Authentication(
            SlowRefresh(gate: gate, refreshes: Locked(0), cancelledRefreshes: cancelled), credential: "stale")
        return (Provider<TestAPI>(transport: transport(), authentication: auth), auth)
    }

    @Test func aCallerWaitingForARefreshIsAnsweredAtOnceWhenCancelled() async throws {
        let gate = StageGate()
        let cancelled = Locked(0)
        let (provider, auth) = Self.slowRefresh(gate: gate, cancelled: cancelled)
        let first = Task { try await provider.request(.plain) }
        await gate.waitForArrivals(1)
        let second = Task { try await provider.request(.plain) }
        // Both callers are now waiting for the refresh (the second in `sign`); cancel the second.
        #expect(await eventually { await auth.refreshWaiterCount == 2 })
        second.cancel()
        guard case .cancelled = (await second.result).failure as? CourierError else {
            Issue.record("expected cancelled")
            return
        }
        // The refresh goes on for the first caller.
        #expect(cancelled.withLock { $0 } == 0)
        gate.open()
        #expect(try await first.value.statusCode == 200)
    }

    @Test func theRefreshIsCancelledWhenTheLastWaiterLeaves() async throws {
        let gate = StageGate()
        let cancelled = Locked(0)
        let (provider, auth) = Self.slowRefresh(gate: gate, cancelled: cancelled)
        let only = Task { try await provider.request(.plain) }
        await gate.waitForArrivals(1)
        only.cancel()
        guard case .cancelled = (await only.result).failure as? CourierError else {
            Issue.record("expected cancelled")
            return
        }
        #expect(await eventually { cancelled.withLock { $0 } == 1 })
        #expect(await auth.isRefreshing == false)
    }

    @Test func theCallTimeoutCoversARefreshThatHangs() async throws {
        let clock = TestClock()
        let gate = StageGate()
        let auth = Authentication(
            SlowRefresh(gate: gate, refreshes: Locked(0), cancelledRefreshes: Locked(0)), credential: "stale")
        let provider = Provider<TestAPI>(
            transport: Self.transport(), clock: clock, callTimeout: .seconds(3), authentication: auth)
        let request = Task { try await provider.request(.plain) }
        await gate.waitForArrivals(1)
        clock.advance(by: .seconds(3))
        guard case .timedOut(let limit) = (await request.result).failure as? CourierError else {
            Issue.record("expected timedOut")
            return
        }
        #expect(limit == .seconds(3))
    }

    @Test func theCallTimeoutAnswersEvenWhenAMappingNeverReturns() async throws {
        let clock = TestClock()
        let stuck = StuckForever()
        let provider = Provider<TestAPI>(
            endpointClosure: { target in
                await stuck.wait()
                return try Endpoint(target: target)
            }, transport: RecordingTransport(), clock: clock, callTimeout: .seconds(2))
        let request = Task { try await provider.request(.plain) }
        await stuck.waitForArrival()
        clock.advance(by: .seconds(2))
        guard case .timedOut = (await request.result).failure as? CourierError else {
            Issue.record("expected timedOut")
            return
        }
        stuck.release()
    }

    @Test func deadlinesReleaseTheirMemoryWhenRequestsEnd() async throws {
        let clock = TestClock()
        let provider = Provider<TestAPI>(
            stubClosure: Provider.immediatelyStub, clock: clock, timeout: .seconds(10), callTimeout: .seconds(20))
        for _ in 0..<2_000 {
            _ = try await provider.request(.plain)
        }
        let timer = try #require(provider.deadlines as? DeadlineTimer<TestClock>)
        #expect(timer.pendingCount == 0)
        // One sleeper per distinct deadline length (the call's and the exchange's), not one per
        // request.
        #expect(clock.sleeperCount == 2)
    }

    @Test func progressStreamsThrowWhenTheirTaskIsCancelled() async throws {
        let clock = TestClock()
        let provider = Provider<TestAPI>(stubClosure: Provider.delayedStub(.seconds(10)), clock: clock)
        let stream = provider.requestWithProgress(.plain)
        let consumer = Task { () throws(CourierError) -> Int in
            var count = 0
            for try await _ in stream { count += 1 }
            return count
        }
        await clock.waitForSleepers(1)
        consumer.cancel()
        guard case .cancelled = (await consumer.result).failure as? CourierError else {
            Issue.record("expected cancelled, got \(await consumer.result)")
            return
        }
    }

    @Test func aProgressStreamIteratedTwiceIsATypedError() async throws {
        let provider = Provider<TestAPI>(stubClosure: Provider.immediatelyStub)
        let stream = provider.requestWithProgress(.plain)
        var first = stream.makeAsyncIterator()
        var second = stream.makeAsyncIterator()
        await #expect {
            _ = try await second.next()
        } throws: { error in
            guard case CourierError.invalidUse = error else { return false }
            return true
        }
        var last: ProgressEvent?
        while let event = try await first.next() { last = event }
        #expect(last?.isCompleted == true)
    }
}

/// A stage that never returns, ignoring cancellation, until the test releases it.
final class StuckForever: Sendable {
    private let gate = StageGate()
    private let released = Locked(false)

    func wait() async {
        // A child that ignores the caller's cancellation.
        await Task { try? await gate.pass() }.value
    }

    func waitForArrival() async { await gate.waitForArrivals(1) }

    func release() { gate.open() }
}

/// Secrets never reach the logger's output.
@Suite struct SecretRedactionTests {
    struct Secretive: TargetType {
        var headers: [String: String] { [:] }
        var baseURL: URL { URL(string: "https://alice:hunter2@api.example.com/v1?api_key=K3Y&page=2")! }
        var path: String { "search?q=x&access_token=T0KEN&Password=PW" }
    }

    @Test func userInfoAndSecretQueryItemsAreRedactedEverywhere() async throws {
        let lines = Locked<[String]>([])
        let logger = NetworkLoggerPlugin(
            configuration: .init(
                options: [.method, .url, .responseStatus, .cURL], redactedQueryItems: ["q"],
                output: { line in lines.withLock { $0.append(line) } }))
        let provider = Provider<Secretive>(stubClosure: Provider.immediatelyStub, plugins: [logger])
        _ = try await provider.request(Secretive())
        let text = lines.withLock { $0.joined(separator: "\n") }
        for secret in ["hunter2", "alice", "K3Y", "T0KEN", "PW", "q=x"] {
            #expect(!text.contains(secret), "\(secret) in \(text)")
        }
        #expect(text.contains("page=2"))
        #expect(text.contains("api_key=<redacted>"))
        #expect(text.contains("<redacted>@api.example.com"))
    }

    @Test func errorDescriptionsRedactURLs() {
        let error = CourierError.schemeNotAllowed(URL(string: "ftp://u:secret@h/x?token=abc")!)
        #expect(!error.localizedDescription.contains("secret"))
        #expect(!error.localizedDescription.contains("abc"))
    }

    @Test func cookiesAreOffByDefault() {
        let configuration = URLSessionTransport.defaultConfiguration()
        #expect(configuration.httpCookieStorage == nil)
        #expect(configuration.httpShouldSetCookies == false)
    }
}
