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
        // One path component only; the rest of a hostile name is dropped.
        (["Content-Disposition": #"attachment; filename="../../etc/passwd""#], "passwd"),
        (["Content-Disposition": #"attachment; filename="sub/dir/x.txt""#], "x.txt"),
        (["Content-Disposition": #"attachment; filename="..\\..\\win.ini""#], "win.ini"),
        // A `;` inside quotes belongs to the name.
        (["Content-Disposition": #"attachment; filename="a;b.txt"; size=3"#], "a;b.txt"),
        // Right-to-left override and other control characters are removed.
        (["Content-Disposition": "attachment; filename=\"evil\u{202E}fdp.exe\""], "evilfdp.exe"),
        (["Content-Disposition": "attachment; filename=\"a\u{7}b\tc.txt\""], "abc.txt"),
        // Leading dots cannot hide the file or climb.
        (["Content-Disposition": #"attachment; filename=".bashrc""#], "bashrc"),
        (["Content-Disposition": #"attachment; filename="..""#], "from-url.zip"),
        // filename* wins, in either order; ISO-8859-1 is decoded too.
        (["Content-Disposition": #"attachment; filename*=UTF-8''na%C3%AFve.txt; filename="naive.txt""#], "naïve.txt"),
        (["Content-Disposition": #"attachment; filename*=iso-8859-1'en'caf%E9.txt"#], "café.txt"),
        // An unknown charset falls back to filename.
        (["Content-Disposition": #"attachment; filename*=koi8-r''x; filename="plain.txt""#], "plain.txt"),
    ])
    func names(headers: [String: String], expected: String) {
        #expect(SuggestedFileName.from(response(headers)) == expected)
    }

    @Test func longNamesAreCutOnACharacterBoundary() {
        let name = String(repeating: "é", count: 200) + ".txt"
        let result = SuggestedFileName.from(response(["Content-Disposition": "attachment; filename=\"\(name)\""]))
        #expect(result.utf8.count <= 255)
        #expect(result.utf8.count >= 254)
        #expect(result.allSatisfy { $0 == "é" })
    }

    @Test func noPathFallsBackToDownload() {
        #expect(SuggestedFileName.from(response([:], url: "https://x.example/")) == "download")
    }

    /// A hostile server name is cut to one file name inside the folder.
    @Test func hostileSuggestedNameStaysInTheFolder() async throws {
        struct Target: TargetType {
            var headers: [String: String] { [:] }
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
        let response = try await Provider<Target>(stubClosure: Provider.immediatelyStub).request(Target(folder: inner))
        #expect(response.fileURL?.path == inner.standardizedFileURL.appendingPathComponent("evil.sh").path)
        #expect(folder.contents == ["in"])
    }
}
