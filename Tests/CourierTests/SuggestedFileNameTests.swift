import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct SuggestedFileNameTests {
    private func response(
        _ headers: [String: String], url: String = "https://x.example/files/from-url.zip"
    ) -> HTTPURLResponse {
        HTTPURLResponse(url: URL(string: url)!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers)!
    }

    @Test(arguments: [
        (["Content-Disposition": #"attachment; filename="report.pdf""#], "report.pdf"),
        (["Content-Disposition": "attachment; filename=plain.txt"], "plain.txt"),
        (["Content-Disposition": #"attachment; filename="a \"q\".txt""#], #"a "q".txt"#),
        (
            ["Content-Disposition": #"attachment; filename="fallback.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf"#],
            "résumé.pdf"
        ),
        (["Content-Disposition": "inline"], "from-url.zip"),
        ([:], "from-url.zip"),
        (["Content-Disposition": #"attachment; filename="../../etc/passwd""#], "../../etc/passwd"),
    ])
    func names(headers: [String: String], expected: String) {
        #expect(SuggestedFileName.from(response(headers)) == expected)
    }

    @Test func noPathFallsBackToDownload() {
        #expect(SuggestedFileName.from(response([:], url: "https://x.example/")) == "download")
    }

    /// A hostile server name is still confined by the folder destination.
    @Test func hostileSuggestedNameIsRejected() async throws {
        struct Target: TargetType {
            let folder: URL
            var baseURL: URL { URL(string: "https://x.example")! }
            var path: String { "f" }
            var task: HTTPTask { .download(.suggestedFileName(in: folder)) }
            var sampleResponse: SampleResponse {
                .response(
                    HTTPURLResponse(
                        url: URL(string: "https://x.example/f")!, statusCode: 200, httpVersion: "HTTP/1.1",
                        headerFields: ["Content-Disposition": #"attachment; filename="../evil.sh""#])!,
                    Data("#!".utf8))
            }
        }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let inner = folder.url.appendingPathComponent("in")
        await #expect(throws: CourierError.self) {
            try await Provider<Target>(stubBehavior: Provider.immediatelyStub).request(Target(folder: inner))
        }
        #expect(folder.contents.isEmpty)
    }
}
