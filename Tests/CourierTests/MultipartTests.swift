import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct MultipartTests {
    struct Upload: TargetType {
        var headers: [String: String] { [:] }
        var form: MultipartFormData
        var method: HTTPMethod = .post
        var urlParameters: Parameters = [:]
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "upload" }
        var task: HTTPTask { .uploadMultipart(form, urlParameters: urlParameters) }
    }

    /// The request and the body the provider sends: built by `urlRequest()` when every part is in
    /// memory, otherwise at send time, off Swift's thread pool.
    private func body(_ form: MultipartFormData, method: HTTPMethod = .post) async throws -> (URLRequest, String) {
        let request = try Endpoint(target: Upload(form: form, method: method)).urlRequest()
        let body: Data
        if let inRequest = request.httpBody {
            body = inRequest
        } else {
            body = try await MultipartEncoder.encodeInMemoryOffPool(form, length: MultipartEncoder.totalLength(form))
        }
        return (request, String(decoding: body, as: UTF8.self))
    }

    @Test func encodesDataFileAndStreamPartsExactly() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("notes.txt", contents: Data("file body".utf8))
        let form = MultipartFormData(
            boundary: "XyZ",
            parts: [
                .init(name: "title", data: Data("Hello".utf8)),
                .init(name: "doc", fileURL: file),
                .init(
                    name: "blob", stream: { InputStream(data: Data("streamed".utf8)) }, length: 8,
                    fileName: "b.bin"),
            ])
        let (request, text) = try await body(form)
        let expected =
            "--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHello\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"notes.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\nfile body\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"b.bin\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\nstreamed\r\n"
            + "--XyZ--\r\n"
        #expect(text == expected)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=XyZ")
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(expected.utf8.count))
    }

    @Test func escapesNamesAndFileNamesPerRFC7578() async throws {
        let form = MultipartFormData(
            boundary: "b",
            parts: [.init(name: "a\"b\r\nc", data: Data("v".utf8), fileName: "my \"file\"\n.txt")])
        let (_, text) = try await body(form)
        #expect(text.contains(#"name="a%22b%0D%0Ac"; filename="my %22file%22%0A.txt""#))
        #expect(!text.contains("a\"b"))
    }

    /// A MIME type cannot add header lines to its part: CR LF (one `Character` in Swift) and every
    /// other control character are dropped. Found by review.
    @Test(arguments: ["text/plain\r\nX-Injected: 1", "text/plain\rX-Injected: 1", "text/plain\nX-Injected: 1"])
    func aMIMETypeCannotAddHeaderLines(mimeType: String) async throws {
        let form = MultipartFormData(
            boundary: "b", parts: [.init(name: "f", data: Data("v".utf8), fileName: "a.txt", mimeType: mimeType)])
        let (_, text) = try await body(form)
        #expect(text.contains("Content-Type: text/plainX-Injected: 1\r\n"))
        #expect(!text.contains("\nX-Injected"))
        #expect(!text.contains("\rX-Injected"))
    }

    /// Declared lengths that add up past what a `Content-Length` can say (a stream part given
    /// `UInt64.max` for "unknown") are a typed error, not an overflow trap. Found by review.
    @Test(arguments: [UInt64.max, UInt64(Int64.max)])
    func lengthsTooLongForAContentLengthAreRefused(length: UInt64) async throws {
        let form = MultipartFormData(
            boundary: "b", parts: [.init(name: "log", stream: { InputStream(data: Data()) }, length: length)])
        let error = await #expect(throws: CourierError.self) { try await form.encodedBody() }
        guard case .multipartEncoding(let failure)? = error else {
            Issue.record("expected multipartEncoding, got \(String(describing: error))")
            return
        }
        #expect(failure as? MultipartFailure == .tooLong(name: "log"))
    }

    @Test func nonASCIIFileNamesAreSentAsUTF8() async throws {
        let form = MultipartFormData(boundary: "b", parts: [.init(name: "f", data: Data(), fileName: "résumé.pdf")])
        let (_, text) = try await body(form)
        #expect(text.contains(#"filename="résumé.pdf""#))
        #expect(text.contains("Content-Type: application/pdf"))
    }

    @Test(arguments: [
        ("photo.JPG", "image/jpeg"), ("data.json", "application/json"), ("archive.tar.gz", "application/gzip"),
        ("noextension", "application/octet-stream"), ("weird.xyz123", "application/octet-stream"),
        ("trailingdot.", "application/octet-stream"),
    ])
    func mimeTypeInferredFromExtension(fileName: String, expected: String) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file(fileName, contents: Data("x".utf8))
        #expect(MultipartFormData.Part(name: "f", fileURL: file).mimeType == expected)
    }

    @Test func explicitMimeTypeWins() {
        let part = MultipartFormData.Part(name: "f", data: Data(), fileName: "a.png", mimeType: "application/x-custom")
        #expect(part.mimeType == "application/x-custom")
        #expect(MultipartFormData.Part(name: "field", data: Data()).mimeType == nil)
    }

    @Test func randomBoundariesDiffer() {
        let a = MultipartFormData(parts: [.init(name: "a", data: Data())])
        let b = MultipartFormData(parts: [.init(name: "a", data: Data())])
        #expect(a.boundary != b.boundary)
        #expect(a.boundary.hasPrefix("courier.boundary."))
    }

    @Test func boundaryWithSpecialCharactersIsQuoted() async throws {
        let form = MultipartFormData(boundary: "a:b=c", parts: [.init(name: "a", data: Data("1".utf8))])
        let (request, _) = try await body(form)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == #"multipart/form-data; boundary="a:b=c""#)
    }

    @Test(arguments: ["", String(repeating: "x", count: 71), "bad\u{7F}char", "ends with space ", "é"])
    func invalidBoundariesThrow(boundary: String) async {
        let form = MultipartFormData(boundary: boundary, parts: [.init(name: "a", data: Data("1".utf8))])
        await #expect {
            try await body(form)
        } throws: { error in
            guard case CourierError.multipartEncoding(let underlying) = error else { return false }
            return underlying as? MultipartFailure == .invalidBoundary(boundary)
        }
    }

    @Test func boundaryInsideAPartThrows() async {
        let form = MultipartFormData(boundary: "abc", parts: [.init(name: "a", data: Data("x--abcx".utf8))])
        await #expect(throws: CourierError.self) { try await body(form) }
    }

    /// Found by review: only data parts were searched for the boundary; a file or stream part
    /// holding `--boundary` (a boundary the caller chose) ended its part early and added parts of
    /// its own. Searched across the chunks parts are copied in.
    @Test func aFileOrStreamPartHoldingAChosenBoundaryThrows() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let injected = "x\r\n--fixed\r\nContent-Disposition: form-data; name=\"role\"\r\n\r\nadmin"
        let file = try folder.file("p.txt", contents: Data(injected.utf8))
        // The delimiter straddles the first and second 1 MiB chunk of the stream.
        var straddling = Data(repeating: UInt8(ascii: "a"), count: MultipartEncoder.chunkSize - 3)
        straddling.append(Data("\r\n--fixed tail".utf8))
        let leading = try folder.file("lead.txt", contents: Data("--fixed\r\nContent-Disposition: x".utf8))
        let content = straddling
        let parts: [MultipartFormData.Part] = [
            .init(name: "f", fileURL: file), .init(name: "l", fileURL: leading),
            .init(name: "s", stream: { InputStream(data: content) }, length: UInt64(content.count)),
        ]
        for part in parts {
            let form = MultipartFormData(boundary: "fixed", parts: [part], memoryThreshold: 0)
            let error = await #expect(throws: CourierError.self) { try await form.encodedBody(maxBytes: 3 << 20) }
            guard case .multipartEncoding(let failure)? = error else {
                Issue.record("expected multipartEncoding, got \(String(describing: error))")
                continue
            }
            #expect(failure as? MultipartFailure == .invalidBoundary("fixed"))
        }
        // The same bytes under a random boundary, and a near miss under the chosen one, go out.
        let random = MultipartFormData(parts: [.init(name: "f", fileURL: file)])
        #expect(try await random.encodedBody().count > injected.utf8.count)
        // Across chunks, an empty one among them; a near miss is not a find.
        var scan = DelimiterScan(Array("\r\n--fixed".utf8), after: [])
        let finds = ["ab\r\n--fi", "", "xed"].map { scan.finds(in: Data($0.utf8)) }
        #expect(finds == [false, false, true])
        var nearMiss = DelimiterScan(Array("\r\n--fixed".utf8), after: [])
        let misses = ["--fixed", "\r\n--fixe", "D--fix", "-fixed"].map { nearMiss.finds(in: Data($0.utf8)) }
        #expect(misses == [false, false, false, false])
        // Not a delimiter where no line starts with it: a style sheet under the boundary `x`.
        let css = try folder.file("a.css", contents: Data(":root { --x-color: red; }\n--xattr".utf8))
        let sheet = MultipartFormData(boundary: "x", parts: [.init(name: "css", fileURL: css)])
        #expect(try await sheet.encodedBody().count > 30)
    }

    /// Found by review: each file was measured again as it was copied and read whole, so a file
    /// that grew after the form was measured (for a body built in memory) was read into memory
    /// entirely before its size was found wrong. Now at most the announced length goes out.
    @Test func aFileThatGrewIsReadNoFurtherThanTheAnnouncedLength() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("grown.bin", contents: Data(repeating: 1, count: 3 << 20))
        let form = MultipartFormData(boundary: "b", parts: [.init(name: "f", fileURL: file)])
        let announced: UInt64 = 200
        var sunk = 0
        #expect {
            try MultipartEncoder.write(form, length: announced) { sunk += $0.count }
        } throws: { error in
            guard case CourierError.multipartEncoding(let failure) = error,
                case .sizeChanged(expected: 200, _)? = failure as? MultipartFailure
            else { return false }
            return true
        }
        #expect(sunk <= Int(announced))
    }

    @Test func theFormsContentTypeQuotesItsBoundary() {
        let form = MultipartFormData(boundary: "a b", parts: [.init(name: "a", data: Data())])
        #expect(form.contentType == #"multipart/form-data; boundary="a b""#)
        #expect(MultipartFormData(boundary: "ab", parts: []).contentType == "multipart/form-data; boundary=ab")
    }

    /// Found by review: a `\\` in a name let quoted-pair parsers read `\\"` as a quote inside the
    /// name; a NUL cut it short in C.
    @Test func backslashesAndControlCharactersInNamesAreEscaped() async throws {
        let form = MultipartFormData(
            boundary: "b",
            parts: [.init(name: "a\\", data: Data("v".utf8), fileName: "x\u{0}y\u{1F}z\u{7F}; name=admin")])
        let (_, text) = try await body(form)
        #expect(text.contains(#"name="a%5C"; filename="x%00y%1Fz%7F; name=admin""#), "\(text)")
        #expect(!text.contains("\\") && !text.contains("\u{0}"))
    }

    @Test func noPartsThrows() async {
        await #expect {
            try await body(MultipartFormData(parts: []))
        } throws: { error in
            guard case CourierError.multipartEncoding(let underlying) = error else { return false }
            return underlying as? MultipartFailure == .noParts
        }
    }

    @Test(arguments: [HTTPMethod.get, .head, .trace])
    func methodsWithoutBodiesThrow(method: HTTPMethod) async {
        let form = MultipartFormData(parts: [.init(name: "a", data: Data("1".utf8))])
        await #expect {
            try await body(form, method: method)
        } throws: { error in
            guard case CourierError.requestMapping(let reason) = error else { return false }
            return reason.contains(method.rawValue)
        }
    }

    @Test func missingFilePartThrows() async {
        let form = MultipartFormData(parts: [
            .init(name: "f", fileURL: URL(fileURLWithPath: "/nonexistent/courier/x.txt"))
        ])
        await #expect {
            try await body(form)
        } throws: { error in
            guard case CourierError.multipartEncoding(let underlying) = error,
                case .unreadableFile = underlying as? MultipartFailure
            else { return false }
            return true
        }
    }

    @Test func streamShorterThanDeclaredThrows() async {
        let form = MultipartFormData(
            boundary: "b", parts: [.init(name: "s", stream: { InputStream(data: Data("abc".utf8)) }, length: 10)])
        await #expect {
            try await body(form)
        } throws: { error in
            guard case CourierError.multipartEncoding(let underlying) = error else { return false }
            return underlying as? MultipartFailure == .streamLengthMismatch(name: "s", expected: 10, actual: 3)
        }
    }

    @Test func urlParametersGoToTheQuery() throws {
        let form = MultipartFormData(parts: [.init(name: "a", data: Data("1".utf8))])
        let request = try Endpoint(target: Upload(form: form, urlParameters: ["v": 2])).urlRequest()
        #expect(request.url?.query == "v=2")
    }

    /// Moya's request carries the encoded form: so does Courier's for a form with file parts up to
    /// `maxBodyReadInRequest`, byte for byte what the provider sends.
    @Test(arguments: [1_000, MultipartFormData.maxBodyReadInRequest - 200])
    func smallFormsWithFilePartsCarryTheirBodyInTheRequest(fileBytes: Int) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("photo.jpg", contents: Data((0..<fileBytes).map { UInt8($0 % 251) }))
        let form = MultipartFormData(
            boundary: "sign", parts: [.init(name: "title", data: Data("Hi".utf8)), .init(name: "photo", fileURL: file)])
        let length = try MultipartEncoder.totalLength(form)
        #expect(length <= UInt64(MultipartFormData.maxBodyReadInRequest))
        let request = try Endpoint(target: Upload(form: form)).urlRequest()
        let inRequest = try #require(request.httpBody, "a small form with a file part must carry its body")
        #expect(inRequest.count == Int(length))
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(length))
        #expect(try await form.encodedBody() == inRequest)
        let transport = RecordingTransferTransport(wrapping: RecordingTransport(statusCode: 200))
        _ = try await Provider<Upload>(transport: transport).request(Upload(form: form))
        #expect(transport.transfers.first?.body == inRequest)
    }

    /// Above `maxBodyReadInRequest` a form with a file part is built when it is sent (the request has
    /// no body); `encodedBody(maxBytes:)` gives the same bytes, and refuses above its bound.
    @Test func largerFormsWithFilePartsAreBuiltWhenSentAndEncodedOnRequest() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bytes = Data((0..<(MultipartFormData.maxBodyReadInRequest + 1)).map { UInt8($0 % 251) })
        let file = try folder.file("big.bin", contents: bytes)
        let form = MultipartFormData(boundary: "sign", parts: [.init(name: "blob", fileURL: file)])
        let length = try MultipartEncoder.totalLength(form)
        let request = try Endpoint(target: Upload(form: form)).urlRequest()
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(length))
        let encoded = try await form.encodedBody()
        #expect(encoded.count == Int(length))
        let transport = RecordingTransferTransport(wrapping: RecordingTransport(statusCode: 200))
        _ = try await Provider<Upload>(transport: transport).request(Upload(form: form))
        #expect(transport.transfers.first?.body == encoded)
        await #expect {
            _ = try await form.encodedBody(maxBytes: Int(length) - 1)
        } throws: { error in
            guard case CourierError.multipartEncoding(let failure as MultipartFailure) = error else { return false }
            return failure == .bodyTooLarge(length: length, limit: Int(length) - 1)
        }
    }

    /// A stream part is never read by `urlRequest()`: it may block, or yield its bytes only once.
    @Test func formsWithAStreamPartAreBuiltWhenSent() async throws {
        let form = MultipartFormData(
            boundary: "s", parts: [.init(name: "blob", stream: { InputStream(data: Data("abc".utf8)) }, length: 3)])
        #expect(try Endpoint(target: Upload(form: form)).urlRequest().httpBody == nil)
        let body = String(decoding: try await form.encodedBody(), as: UTF8.self)
        #expect(body.contains("\r\n\r\nabc\r\n--s--\r\n"))
    }

    /// Above the threshold the body is streamed to a temporary file, uploaded from it, and the file
    /// is removed afterwards, whether the request succeeds or fails.
    @Test(arguments: [200, 500])
    func largeBodiesGoThroughATemporaryFileThatIsRemoved(status: Int) async throws {
        let payload = Data((0..<5_000).map { UInt8($0 % 251) })
        let form = MultipartFormData(
            boundary: "big", parts: [.init(name: "blob", data: payload, fileName: "p.bin")], memoryThreshold: 1_000)
        let small = MultipartFormData(boundary: "big", parts: [.init(name: "blob", data: payload, fileName: "p.bin")])
        let transport = RecordingTransferTransport(wrapping: RecordingTransport(statusCode: status))
        let provider = Provider<Upload>(transport: transport)
        let request = try Endpoint(target: Upload(form: form)).urlRequest()
        #expect(request.httpBody == nil)
        let response = try await provider.request(Upload(form: form))
        #expect(response.statusCode == status)
        let record = try #require(transport.transfers.first)
        guard case .file(let bodyFile) = record.transfer.body else {
            Issue.record("expected a file body")
            return
        }
        #expect(record.body == (try Endpoint(target: Upload(form: small)).urlRequest().httpBody))
        #expect(record.transfer.request.value(forHTTPHeaderField: "Content-Length") == String(record.body?.count ?? -1))
        #expect(!fileExists(bodyFile))
    }

    @Test func temporaryBodyIsRemovedWhenCancelled() async throws {
        let form = MultipartFormData(parts: [.init(name: "blob", data: Data(count: 4_000))], memoryThreshold: 100)
        let gated = GatedTransport()
        let transport = RecordingTransferTransport(wrapping: gated)
        let provider = Provider<Upload>(transport: transport)
        let request = Task { try await provider.request(Upload(form: form)) }
        await gated.waitForRequests(1)
        guard case .file(let bodyFile) = try #require(transport.transfers.first).transfer.body else {
            Issue.record("expected a file body")
            return
        }
        #expect(fileExists(bodyFile))
        // Readable by its owner only while it waits in the shared temporary directory (found by review).
        var info = stat()
        #expect(stat(bodyFile.path, &info) == 0)
        #expect(info.st_mode & 0o077 == 0, "mode \(String(info.st_mode & 0o777, radix: 8))")
        request.cancel()
        #expect(((await request.result).failure as? CourierError)?.isCancellation == true)
        #expect(!fileExists(bodyFile))
    }

    @Test func formsCompareByParts() {
        let a = MultipartFormData(boundary: "b", parts: [.init(name: "a", data: Data("1".utf8))])
        let b = MultipartFormData(boundary: "b", parts: [.init(name: "a", data: Data("1".utf8))])
        let c = MultipartFormData(boundary: "b", parts: [.init(name: "a", data: Data("2".utf8))])
        #expect(a == b)
        #expect(a != c)
        #expect(HTTPTask.uploadMultipart(a) == .uploadMultipart(b))
    }
}
