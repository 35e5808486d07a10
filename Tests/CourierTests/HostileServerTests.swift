import Courier
import CourierTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Against scripts/fault_server.py acting as a hostile server: every attack ends in a typed error
/// (or the documented result) within the deadline, the process survives, and nothing is left in
/// flight, in the temporary folder or in the destination folder.
@Suite(.enabled(if: FaultServer.isAvailable, "needs COURIER_FAULT_URL (run scripts/test)"), .timeLimit(.minutes(3)))
struct HostileServerTests {
    /// The error of a request, or `nil` when it succeeded.
    private func failure(_ target: Fault, provider: Provider<Fault> = Provider<Fault>()) async -> CourierError? {
        do throws(CourierError) {
            _ = try await provider.request(target)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Redirects and schemes

    /// FoundationNetworking would speak FTP to the new location (uploading a POST's body), then trap.
    @Test func a307ToFTPIsRefusedAndNothingIsSent() async {
        let target = Fault(
            path: "redirect-307-ftp", method: .post, task: .data(Data("secret body".utf8)), timeout: .seconds(30))
        let error = await failure(target)
        guard case .schemeNotAllowed(let url) = error else {
            Issue.record("expected schemeNotAllowed, got \(String(describing: error))")
            return
        }
        #expect(url.scheme == "ftp")
    }

    /// A 302 without a Location is the answer. FoundationNetworking never hands its body over
    /// (documented in ChoosingATransport); Apple's URLSession does.
    @Test func a302WithoutALocationIsTheAnswer() async throws {
        let response = try await Provider<Fault>().request(Fault(path: "redirect-no-location", timeout: .seconds(30)))
        #expect(response.statusCode == 302)
        #if canImport(FoundationNetworking)
            #expect(response.data.isEmpty)
        #else
            #expect(String(decoding: response.data, as: UTF8.self) == "moved")
        #endif
    }

    /// A redirect whose body breaks off: its body is not wanted, and on Apple's URLSession it is
    /// followed. FoundationNetworking hands a redirect's head over only once its whole body is in,
    /// so the transfer fails with no head to follow (documented in ChoosingATransport).
    @Test func aRedirectWhoseBodyBreaksOff() async throws {
        let target = Fault(path: "redirect-cut", timeout: .seconds(30))
        #if canImport(FoundationNetworking)
            let error = await failure(target)
            #expect(error?.response == nil, "\(String(describing: error))")
            guard case .underlying(let underlying, _)? = error else {
                Issue.record("expected a network error, got \(String(describing: error))")
                return
            }
            #expect(underlying is URLError)
        #else
            let response = try await Provider<Fault>().request(target)
            #expect(response.statusCode == 200)
            #expect(String(decoding: response.data, as: UTF8.self) == "ok")
        #endif
    }

    /// What `URLSessionTransport` cannot hold (documented in `Limits.maxResponseBytes`): a gzip
    /// body that decodes to nothing passes the limit on decoded bytes, since the system decodes
    /// before Courier sees a byte. On Linux the call reads the server's 8 MiB of nothing against a
    /// 1 MiB limit and ends when the server does; only a timeout holds one that never ends.
    /// (AsyncHTTPClientTransport, which decodes itself, fails it at the limit:
    /// EncodedBodyOnTheWireTests.)
    @Test func aCompressedBodyOfNothingIsHeldOnlyByATimeout() async throws {
        let target = Fault(
            path: "gzip-nothing?n=\(8 << 20)", timeout: .seconds(120), limits: Limits(maxResponseBytes: 1 << 20))
        let error = await failure(target)
        #if canImport(FoundationNetworking)
            guard case .underlying(let underlying, _)? = error else {
                Issue.record("expected the server's end (a cut body), got \(String(describing: error))")
                return
            }
            #expect(underlying is URLError)
        #else
            #expect(error != nil)
        #endif
    }

    @Test(arguments: ["redirect-302-ftp", "redirect-302-file"])
    func followedRedirectsToOtherSchemesAreRefused(path: String) async {
        let error = await failure(Fault(path: path, timeout: .seconds(30)))
        guard case .schemeNotAllowed(let url) = error else {
            Issue.record("expected schemeNotAllowed, got \(String(describing: error))")
            return
        }
        #expect(url.scheme != "http")
    }

    @Test func redirectsAreCountedAgainstTheLimit() async throws {
        let limits = Limits(maxRedirects: 3)
        let within = Provider<Fault>(limits: limits)
        // n=2: three redirects (2, 1, 0, then /ok); n=3: four.
        #expect(try await within.request(Fault(path: "redirect-chain?n=2", timeout: .seconds(30))).statusCode == 200)
        let error = await failure(Fault(path: "redirect-chain?n=3", timeout: .seconds(30)), provider: within)
        #expect((error?.underlyingError as? URLError)?.code == .httpTooManyRedirects, "\(String(describing: error))")
    }

    // MARK: Bodies

    @Test func aDecompressionBombStopsAtTheRatio() async {
        let error = await failure(Fault(path: "gzip-bomb", timeout: .seconds(30)))
        #expect(error.map { "\($0)" } == CourierError.limitExceeded(.decompressionRatio(limit: 200)).description)
    }

    @Test func aChunkedBombStopsAtTheSizeLimit() async {
        let limits = Limits(maxResponseBytes: 8 << 20)
        let error = await failure(Fault(path: "gzip-bomb-chunked", timeout: .seconds(30), limits: limits))
        guard case .limitExceeded(.responseBody(let limit)) = error else {
            Issue.record("expected the body limit, got \(String(describing: error))")
            return
        }
        #expect(limit == 8 << 20)
    }

    @Test(arguments: ["big", "big-chunked"])
    func bodiesOverTheLimitAreRefused(path: String) async {
        let limits = Limits(maxResponseBytes: 1 << 20)
        let error = await failure(Fault(path: "\(path)?n=\(16 << 20)", timeout: .seconds(30), limits: limits))
        guard case .limitExceeded(.responseBody(let limit)) = error else {
            Issue.record("expected the body limit, got \(String(describing: error))")
            return
        }
        #expect(limit == 1 << 20)
    }

    @Test func bodiesWithinTheLimitArriveWhole() async throws {
        let response = try await Provider<Fault>().request(Fault(path: "big?n=\(5 << 20)", timeout: .seconds(30)))
        #expect(response.data.count == 5 << 20)
    }

    @Test func downloadsOverTheLimitLeaveNothing() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let transport = RecordingTransferTransport(wrapping: URLSessionTransport())
        let provider = Provider<Fault>(transport: transport)
        let error = await failure(
            Fault(
                path: "big-chunked?n=\(8 << 20)", task: .download(.suggestedFileName(in: folder.url)),
                timeout: .seconds(30), limits: Limits(maxDownloadBytes: 1 << 20)),
            provider: provider)
        guard case .limitExceeded(.downloadBody(let limit)) = error else {
            Issue.record("expected the download limit, got \(String(describing: error))")
            return
        }
        #expect(limit == 1 << 20)
        #expect(folder.contents.isEmpty)
        guard case .file(let temporary) = try #require(transport.transfers.first).transfer.destination else {
            Issue.record("expected a file destination")
            return
        }
        #expect(!fileExists(temporary))
    }

    @Test func aHostileFileNameIsMadeSafe() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let response = try await Provider<Fault>().request(
            Fault(path: "disposition", task: .download(.suggestedFileName(in: folder.url)), timeout: .seconds(30)))
        // `sub/../dir\evil<RLO>txt.exe` in quotes: `\e` is an escaped `e` (RFC 6266 quoted-string),
        // the path is cut to its last component and the right-to-left override removed.
        #expect(folder.contents == ["direviltxt.exe"])
        #expect(response.fileURL?.lastPathComponent == "direviltxt.exe")
    }

    // MARK: Cookies

    /// 2,000 cookies of 4 KB would make every later request to the host fail ("Out of memory");
    /// the default transport keeps none and sends none.
    @Test func aCookieFloodCannotBreakLaterRequests() async throws {
        let provider = Provider<Fault>()
        for index in 0..<40 {
            _ = try await provider.request(Fault(path: "cookie-flood?i=\(index)", timeout: .seconds(30)))
        }
        let echo = try await provider.request(Fault(path: "echo", timeout: .seconds(30))).map(FaultTests.EchoBack.self)
        #expect(echo.headers["Cookie"] == nil)
    }

    // MARK: Uploads

    /// A file truncated while it is sent would stall FoundationNetworking until the deadline; it is
    /// a typed error as soon as the change is seen. The server stops reading after 64 KiB (for up
    /// to 60 s), so the upload cannot finish before the file changes, however late this task is
    /// scheduled to see its first progress on a loaded machine (a whole 8 MiB upload once did).
    @Test func aFileTruncatedDuringTheUploadIsATypedError() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("big.bin", contents: Data(repeating: 7, count: 8 << 20))
        let provider = Provider<Fault>()
        let stream = provider.requestWithProgress(
            Fault(path: "slow-sink?stall=60&hold=65536", method: .post, task: .uploadFile(file), timeout: .seconds(90)))
        var truncated = false
        do {
            for try await event in stream {
                if !truncated, (event.upload?.completed ?? 0) > 0 {
                    truncated = true
                    try FileHandle(forWritingTo: file).truncate(atOffset: 1000)
                }
            }
            Issue.record("expected an error")
        } catch {
            guard case .underlying(let underlying, _) = error as? CourierError,
                case .sizeChanged = underlying as? FileBodyFailure
            else {
                Issue.record("expected sizeChanged, got \(error)")
                return
            }
        }
        #expect(truncated)
    }

    /// A server that reads the head and a little of the body, then stops reading and never
    /// answers: the upload cannot go on, and with no Courier deadline it is the transport's idle
    /// timeout (`timeoutIntervalForRequest`, 60 s by default; 1 s here) that ends it, typed. The
    /// server holds the connection for up to 60 s: an upload that waited for it would be answered
    /// 200 instead.
    @Test func anUploadTheServerStopsReadingEndsOnTheIdleTimeout() async throws {
        let configuration = URLSessionTransport.defaultConfiguration()
        configuration.timeoutIntervalForRequest = 1
        let provider = Provider<Fault>(transport: URLSessionTransport(configuration: configuration))
        let body = Data(repeating: 7, count: 32 << 20)
        let error = await failure(
            Fault(path: "slow-sink?stall=60&hold=65536", method: .post, task: .data(body), timeout: nil),
            provider: provider)
        guard case .underlying(let underlying as URLError, _)? = error else {
            Issue.record("expected a URLError, got \(String(describing: error))")
            return
        }
        #expect(underlying.code == .timedOut)
    }

    // MARK: Files and descriptors

    /// Downloads waiting for a connection (or for their first byte) hold no open file: the file is
    /// opened with the first byte, so thousands of queued downloads do not run out of descriptors.
    @Test func queuedDownloadsHoldNoFileDescriptors() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let transport = RecordingTransferTransport(wrapping: URLSessionTransport())
        let provider = Provider<Fault>(transport: transport)
        let tasks = (0..<300).map { index in
            Task {
                try await provider.request(
                    Fault(
                        path: "stall-headers", task: .download(.folder(folder.url) { _, _ in "\(index)" }),
                        timeout: .seconds(60)))
            }
        }
        #expect(await eventually { transport.transfers.count == 300 })
        let temporaryFiles = Set(
            transport.transfers.compactMap { record -> String? in
                guard case .file(let url) = record.transfer.destination else { return nil }
                return url.resolvingSymlinksInPath().path
            })
        #expect(temporaryFiles.count == 300)
        let open = openFilePaths().filter(temporaryFiles.contains)
        tasks.forEach { $0.cancel() }
        for task in tasks { _ = await task.result }
        #expect(open.isEmpty, "\(open.count) of 300 queued downloads hold an open file")
        #expect(folder.contents.isEmpty)
        #expect(temporaryFiles.allSatisfy { !FileManager.default.fileExists(atPath: $0) })
    }

    /// A refused status whose body stalls, over the real transport: the call ends on the stream's
    /// idle timeout (on the provider's clock) with the status and what arrived, instead of waiting
    /// for the server to close (which this one does only once the client leaves). The head is
    /// handed over with the first chunk (`FirstChunkWithHead`): FoundationNetworking delivers the
    /// "busy" that came in the head's segment a moment after the head, and moving the test clock
    /// in that moment would time out a body that did arrive.
    @Test func aRefusedStatusWhoseBodyStallsEndsOnTheIdleTimeout() async throws {
        struct Refused: TargetType {
            var baseURL: URL { FaultServer.baseURL ?? URL(string: "http://127.0.0.1:9")! }
            var path: String { "refused-stall" }
            var headers: [String: String] { [:] }
            var validation: ValidationType { .successCodes }
        }
        let clock = TestClock()
        let provider = Provider<Refused>(transport: FirstChunkWithHead(inner: URLSessionTransport()), clock: clock)
        let call = Task { try await provider.stream(Refused(), idleTimeout: .seconds(5)) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        await #expect {
            try await call.value
        } throws: { error in
            guard case CourierError.statusCode(let response) = error else { return false }
            return response.statusCode == 503 && String(decoding: response.data, as: UTF8.self) == "busy"
        }
    }
}
