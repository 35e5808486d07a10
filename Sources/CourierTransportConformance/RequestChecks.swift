import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TransportConformance {
    static let requestChecks: [Check] = [
        Check("a GET answers with the status, headers, body and the request sent") { context in
            let response = try await context.provider().request(
                context.bin("get", task: .parameters(["q": "a b", "n": 1], encoding: .queryString)))
            #expect(response.statusCode == 200)
            #expect(response.response?.value(forHTTPHeaderField: "content-type") == "application/json")
            #expect(response.request?.url?.query?.contains("q=a%20b") == true)
            let echo = try response.map(Echo.self)
            #expect(echo.args == ["q": "a b", "n": "1"])
        },
        Check("error statuses are responses, not errors, for the provider to validate") { context in
            for status in [204, 304, 404, 418, 500, 503] {
                let response = try await context.provider().request(context.bin("status/\(status)"))
                #expect(response.statusCode == status)
            }
        },
        Check("a POST sends its body and Content-Type") { context in
            let body = Data(#"{"name":"Courier","n":[1,2,3]}"#.utf8)
            let echo = try await context.provider().request(
                context.bin("post", method: .post, task: .data(body), headers: ["Content-Type": "application/json"])
            ).map(Echo.self)
            #expect(echo.data == String(decoding: body, as: UTF8.self))
            #expect(echo.headers["Content-Type"] == "application/json")
            #expect(echo.headers["Content-Length"] == "\(body.count)")
        },
        Check("every method reaches the server as itself") { context in
            for method in [HTTPMethod.put, .patch, .delete] {
                let echo = try await context.provider().request(
                    context.bin("anything", method: method, task: .data(Data("x".utf8)))
                ).map(Echo.self)
                #expect(echo.method == method.rawValue)
            }
            let head = try await context.provider().request(context.bin("get", method: .head))
            #expect(head.statusCode == 200)
            #expect(head.data.isEmpty)
        },
        Check("headers arrive as set, and a User-Agent is sent by default") { context in
            let echo = try await context.provider().request(
                context.bin("headers", headers: ["X-Courier": "conformance", "Accept": "application/json"])
            ).map(Echo.self)
            #expect(echo.headers["X-Courier"] == "conformance")
            #expect(echo.headers["Accept"] == "application/json")
            #expect(echo.headers["User-Agent"]?.isEmpty == false)
            let own = try await context.provider().request(
                context.bin("headers", headers: ["User-Agent": "MyApp/1.0"])
            ).map(Echo.self)
            #expect(own.headers["User-Agent"] == "MyApp/1.0")
        },
        Check("repeated response headers are joined, and looked up in any case") { context in
            let response = try await context.provider().request(
                context.bin(
                    "response-headers",
                    task: .parameters(["X-One": "1", "x-two": "2"], encoding: .queryString)))
            #expect(response.response?.value(forHTTPHeaderField: "x-one") == "1")
            #expect(response.response?.value(forHTTPHeaderField: "X-Two") == "2")
        },
        Check("gzip and deflate bodies are decoded") { context in
            struct Compressed: Decodable {
                var gzipped: Bool?
                var deflated: Bool?
            }
            let gzip = try await context.provider().request(context.bin("gzip")).map(Compressed.self)
            #expect(gzip.gzipped == true)
            let deflate = try await context.provider().request(context.bin("deflate")).map(Compressed.self)
            #expect(deflate.deflated == true)
        },
        Check("an authentication challenge without a credential answers with its 401") { context in
            let response = try await context.provider().request(context.bin("basic-auth/user/secret"))
            #expect(response.statusCode == 401)
            // A download too: the 401 is its answer, saved like any other.
            let folder = try ScratchFolder()
            defer { folder.remove() }
            let destination = DownloadDestination.folder(folder.url) { _, _ in "denied.txt" }
            let downloaded = try await context.provider().request(
                context.bin("basic-auth/user/secret", task: .download(destination)))
            #expect(downloaded.statusCode == 401)
            #expect(downloaded.fileURL?.lastPathComponent == "denied.txt")
            #expect(folder.contents == ["denied.txt"])
            // And a stream: its body ends, without an error.
            let stream = try await context.provider().stream(context.bin("basic-auth/user/secret"))
            #expect(stream.statusCode == 401)
            var body = Data()
            for try await chunk in stream.chunks { body.append(chunk) }
            #expect(body.isEmpty)
        },
        Check("cookies are neither stored nor sent") { context in
            struct Cookies: Decodable { var cookies: [String: String] }
            let provider = context.provider()
            let set = try await provider.request(
                context.bin("cookies/set", task: .parameters(["flavour": "oat"], encoding: .queryString)))
            #expect(set.statusCode == 200)
            let after = try await provider.request(context.bin("cookies")).map(Cookies.self)
            #expect(after.cookies.isEmpty)
        },
        Check("a request the transport sends directly returns its response") { context in
            let url = context.servers.httpbin.appendingPathComponent("status/202")
            let response = try await context.transport.send(URLRequest(url: url))
            #expect(response.statusCode == 202)
            #expect(response.request?.url == url)
        },
    ]
}
