import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TransportConformance {
    static let transferChecks: [Check] = [
        Check("a file body is sent whole, with its length") { context in
            let folder = try ScratchFolder()
            defer { folder.remove() }
            let file = try folder.file(named: "body.txt", size: 3 << 20 + 17)
            let echo = try await context.provider().request(
                context.fault("echo", method: .post, task: .uploadFile(file))
            ).map(FaultEcho.self)
            #expect(echo.body.utf8.count == 3 << 20 + 17)
            #expect(Data(echo.body.utf8) == (try Data(contentsOf: file)))
            #expect(echo.headers["Content-Length"] == "\(3 << 20 + 17)")
        },
        Check("a multipart form with a file part is sent whole") { context in
            let folder = try ScratchFolder()
            defer { folder.remove() }
            let file = try folder.file(named: "notes.txt", size: 100_000)
            let form = MultipartFormData(parts: [
                .init(name: "title", data: Data("Notes".utf8)),
                .init(name: "attachment", fileURL: file),
            ])
            let echo = try await context.provider().request(
                context.bin("post", method: .post, task: .uploadMultipart(form))
            ).map(Echo.self)
            #expect(echo.form == ["title": "Notes"])
            #expect(echo.files?["attachment"] == String(decoding: try Data(contentsOf: file), as: UTF8.self))
        },
        Check("a download is written to its file, and progress counts it") { context in
            let folder = try ScratchFolder()
            defer { folder.remove() }
            let size = 5 << 20 + 3
            let destination = DownloadDestination.folder(folder.url) { _, _ in "big.bin" }
            var counts: Set<Int64> = []
            var response: Response?
            let target = context.fault(
                "big", task: .downloadParameters(["n": size], encoding: .queryString, destination: destination))
            for try await event in context.provider().requestWithProgress(target) {
                if let download = event.download { counts.insert(download.completed) }
                if let final = event.response { response = final }
            }
            let file = try #require(response?.fileURL)
            #expect(file.lastPathComponent == "big.bin")
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect((attributes[.size] as? NSNumber)?.intValue == size)
            #expect(response?.data.isEmpty == true)
            #expect(counts.max() == Int64(size))
            // Reported while the body arrives, not once at the end.
            #expect(counts.filter { $0 > 0 && $0 < Int64(size) }.count >= 1)
        },
        // A reset and bad chunking: plain HTTP only (behind a proxy they become a 502 answer).
        Check("a download that fails leaves no file behind", overTLS: false) { context in
            let folder = try ScratchFolder()
            defer { folder.remove() }
            let destination = DownloadDestination.folder(folder.url) { _, _ in "partial.bin" }
            for path in ["close-mid-body", "reset", "bad-chunked"] {
                await #expect(throws: CourierError.self) {
                    try await context.provider().request(context.fault(path, task: .download(destination)))
                }
                #expect(folder.contents.isEmpty, "\(path)")
            }
        },
        Check("download progress starts with the answer's head: an empty body, a HEAD, not a redirect") { context in
            /// The download counts of every event, in order.
            func downloads(_ target: Conformance) async throws -> [ProgressEvent.Bytes] {
                var counts: [ProgressEvent.Bytes] = []
                for try await event in context.provider().requestWithProgress(target) {
                    if let download = event.download { counts.append(download) }
                }
                return counts
            }
            // An empty body has no first byte: its head still starts the download, of 0 bytes.
            let empty = try await downloads(context.fault("empty"))
            #expect(empty.last == ProgressEvent.Bytes(completed: 0, total: 0), "empty body: \(empty)")
            // A HEAD's Content-Length is the body a GET would get: this answer has none.
            let head = try await downloads(context.fault("ok", method: .head))
            #expect(head.last == ProgressEvent.Bytes(completed: 0, total: 0), "HEAD: \(head)")
            // Three 302s with bodies of 50 bytes, then "ok": only the answer is counted, from its
            // head (0 of 2) to its last byte.
            let chain = try await downloads(
                context.fault("redirect-chain", task: .parameters(["n": 2, "body": 50], encoding: .queryString)))
            #expect(Set(chain.map(\.total)) == [2], "redirects: \(chain)")
            #expect(chain.first == ProgressEvent.Bytes(completed: 0, total: 2), "redirects: \(chain)")
            #expect(chain.last == ProgressEvent.Bytes(completed: 2, total: 2), "redirects: \(chain)")
            // A 302 without a Location is the answer: its head starts the download. (Of its body,
            // FoundationNetworking hands nothing over.)
            let unfollowable = try await downloads(context.fault("redirect-no-location"))
            #expect(
                unfollowable.first == ProgressEvent.Bytes(completed: 0, total: 5),
                "302 without Location: \(unfollowable)")
        },
        Check("upload progress reaches the body's size") { context in
            let body = Data(repeating: 0x61, count: 512 << 10)
            var sent: Int64 = 0
            var total: Int64?
            for try await event in context.provider().requestWithProgress(
                context.bin("post", method: .post, task: .data(body)))
            {
                if let upload = event.upload {
                    #expect(upload.completed >= sent)
                    sent = upload.completed
                    total = upload.total
                }
            }
            #expect(sent == Int64(body.count))
            #expect(total == Int64(body.count))
        },
    ]
}
