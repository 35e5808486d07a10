import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The `URLError` a failed request carries, if that is how it failed.
func urlErrorCode(_ error: CourierError) -> URLError.Code? {
    guard case .underlying(let underlying, _) = error else { return nil }
    return (underlying as? URLError)?.code
}

extension TransportConformance {
    static let redirectChecks: [Check] = [
        Check("redirects are followed, up to the limit") { context in
            let response = try await context.provider().request(
                context.fault("redirect-chain", task: .parameters(["n": 3], encoding: .queryString)))
            #expect(response.statusCode == 200)
            #expect(String(decoding: response.data, as: UTF8.self) == "ok")
            // `request` is the last hop's: the provider reads it to tell whether an answer came
            // from where the credential was sent (a 401 from another origin starts no refresh).
            #expect(response.request?.url?.path == "/ok")
            #expect(response.response?.url?.path == "/ok")
            // Three hops with a limit of two: refused.
            await #expect {
                try await context.provider(limits: Limits(maxRedirects: 2)).request(
                    context.fault("redirect-chain", task: .parameters(["n": 3], encoding: .queryString)))
            } throws: { error in
                (error as? CourierError).flatMap(urlErrorCode) == .httpTooManyRedirects
            }
        },
        Check("metrics count the redirects followed and say when the response head arrived") { context in
            // redirect-chain?n=3 answers 302 four times (n = 3, 2, 1, 0), then /ok.
            let chain = HTTPTask.parameters(["n": 3], encoding: .queryString)
            let direct = try await context.provider().request(context.fault("ok"))
            let redirected = try await context.provider().request(context.fault("redirect-chain", task: chain))
            for (response, hops) in [(direct, 0), (redirected, 4)] {
                let metrics = try #require(response.metrics)
                #expect(metrics.redirects == hops)
                let attempt = try #require(metrics.attempts.first)
                #expect(attempt.transfer?.redirects == hops)
                let responseStart = try #require(attempt.responseStart, "the transport reports the response start")
                #expect(responseStart >= attempt.start && responseStart <= attempt.end)
            }
            // The same to a file: the redirects' bodies never reach it.
            let folder = try ScratchFolder()
            defer { folder.remove() }
            let destination = DownloadDestination.folder(folder.url) { _, _ in "chain.txt" }
            let downloaded = try await context.provider().request(
                context.fault(
                    "redirect-chain",
                    task: .downloadParameters(["n": 3], encoding: .queryString, destination: destination)))
            #expect(downloaded.metrics?.redirects == 4)
            #expect(downloaded.metrics?.attempts.first?.responseStart != nil)
            let file = try #require(downloaded.fileURL)
            #expect(try String(contentsOf: file, encoding: .utf8) == "ok")
            #expect(folder.contents == ["chain.txt"])
        },
        Check("a redirect's body is not the answer's: held to none of its limits, never kept") { context in
            // Two 302s with bodies of 1 MiB, then "ok": limits far below a redirect's body hold
            // the answer alone (a transport reads a little of the redirect's body, then drops it).
            let tight = Limits(maxResponseBytes: 1_000, maxDownloadBytes: 1_000)
            let chain: Parameters = ["n": 1, "body": 1_048_576]
            let response = try await context.provider(limits: tight).request(
                context.fault("redirect-chain", task: .parameters(chain, encoding: .queryString)))
            #expect(response.statusCode == 200)
            #expect(String(decoding: response.data, as: UTF8.self) == "ok")
            #expect(response.metrics?.redirects == 2)
            let folder = try ScratchFolder()
            defer { folder.remove() }
            let destination = DownloadDestination.folder(folder.url) { _, _ in "chain.txt" }
            let downloaded = try await context.provider(limits: tight).request(
                context.fault(
                    "redirect-chain",
                    task: .downloadParameters(chain, encoding: .queryString, destination: destination)))
            let file = try #require(downloaded.fileURL)
            #expect(try String(contentsOf: file, encoding: .utf8) == "ok")
            #expect(folder.contents == ["chain.txt"])
        },
        Check("a redirect loop ends with httpTooManyRedirects") { context in
            // A low limit: each hop is a request, and 21 of them in a row (the default limit's)
            // passed a 60-second deadline in a loaded test run on 2 cores. The default is a
            // constant the same rule reads (TransportRulesTests).
            await #expect {
                try await context.provider(limits: Limits(maxRedirects: 3)).request(context.fault("redirect-loop"))
            } throws: { error in
                (error as? CourierError).flatMap(urlErrorCode) == .httpTooManyRedirects
            }
        },
        Check("307 repeats the method and the body, from memory and from a file") { context in
            let echo = try await context.provider().request(
                context.fault("redirect-307", method: .post, task: .data(Data("payload".utf8)))
            ).map(FaultEcho.self)
            #expect(echo.method == "POST")
            #expect(echo.body == "payload")
            let folder = try ScratchFolder()
            defer { folder.remove() }
            let file = try folder.file(named: "upload.txt", size: 200_000)
            let fromFile = try await context.provider().request(
                context.fault("redirect-307", method: .post, task: .uploadFile(file))
            ).map(FaultEcho.self)
            #expect(fromFile.method == "POST")
            #expect(fromFile.body.utf8.count == 200_000)
        },
        Check("303, and 302 after a POST, continue as GET without the body") { context in
            for status in [302, 303] {
                let target = context.bin(
                    "redirect-to", method: .post,
                    task: .compositeData(Data("gone".utf8), urlParameters: ["url": "/anything", "status_code": status]))
                let echo = try await context.provider().request(target).map(Echo.self)
                #expect(echo.method == "GET", "\(status)")
                #expect(echo.data?.isEmpty ?? true, "\(status)")
            }
        },
        Check("a redirect to another origin drops the credentials (Limits.credentialHeaders)") { context in
            let target = context.fault(
                "redirect-other-origin",
                headers: ["Authorization": "Bearer secret", "Cookie": "a=b", "x-api-key": "k3y", "X-Keep": "1"])
            let echo = try await context.provider().request(target).map(FaultEcho.self)
            // Header names in any case, as the transport spelled them.
            let headers = Dictionary(echo.headers.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
            #expect(headers["host"]?.hasPrefix("localhost") == true)
            #expect(headers["authorization"] == nil)
            #expect(headers["cookie"] == nil)
            #expect(headers["x-api-key"] == nil)
            #expect(headers["x-keep"] == "1")
        },
        Check("a redirect to a scheme that is not allowed is refused") { context in
            for path in ["redirect-302-ftp", "redirect-307-ftp", "redirect-302-file"] {
                await #expect {
                    try await context.provider().request(
                        context.fault(path, method: .post, task: .data(Data("x".utf8))))
                } throws: { error in
                    guard case .schemeNotAllowed(let url) = error as? CourierError else { return false }
                    return url.scheme == "ftp" || url.scheme == "file"
                }
            }
        },
    ]

    static let limitChecks: [Check] = [
        Check("a body larger than maxResponseBytes fails, announced or not") { context in
            let limits = Limits(maxResponseBytes: 1 << 20)
            for path in ["big", "big-chunked"] {
                await #expect {
                    try await context.provider(limits: limits).request(
                        context.fault(path, task: .parameters(["n": 3 << 20], encoding: .queryString)))
                } throws: { error in
                    guard case .limitExceeded(.responseBody(let limit)) = error as? CourierError else { return false }
                    return limit == 1 << 20
                }
            }
            let fits = try await context.provider(limits: limits).request(
                context.fault("big", task: .parameters(["n": 1 << 20], encoding: .queryString)))
            #expect(fits.data.count == 1 << 20)
        },
        Check("a download larger than maxDownloadBytes fails and leaves no file") { context in
            let folder = try ScratchFolder()
            defer { folder.remove() }
            let destination = DownloadDestination.folder(folder.url) { _, _ in "big.bin" }
            await #expect {
                try await context.provider(limits: Limits(maxDownloadBytes: 1 << 20)).request(
                    context.fault(
                        "big-chunked",
                        task: .downloadParameters(["n": 3 << 20], encoding: .queryString, destination: destination)))
            } throws: { error in
                guard case .limitExceeded(.downloadBody) = error as? CourierError else { return false }
                return true
            }
            #expect(folder.contents.isEmpty)
        },
        Check("a decompression bomb fails on the ratio, or on the size when its length is unknown") { context in
            await #expect {
                try await context.provider().request(context.fault("gzip-bomb"))
            } throws: { error in
                guard case .limitExceeded(.decompressionRatio(let ratio)) = error as? CourierError else { return false }
                return ratio == Limits.defaultMaxDecompressionRatio
            }
            await #expect {
                try await context.provider(limits: Limits(maxResponseBytes: 8 << 20)).request(
                    context.fault("gzip-bomb-chunked"))
            } throws: { error in
                guard case .limitExceeded(.responseBody) = error as? CourierError else { return false }
                return true
            }
        },
        Check("the transport checks the destination of every transfer it is handed") { context in
            // Not only through a provider (which checks too): a transfer handed to the transport
            // directly, as by a transport that wraps it, is refused before anything is sent.
            let refused = try #require(URL(string: "ftp://127.0.0.1:9/x"))
            await #expect {
                try await context.transport.send(Transfer(request: URLRequest(url: refused)))
            } throws: { error in
                guard case .schemeNotAllowed(let url) = error as? CourierError else { return false }
                return url == refused
            }
            await #expect {
                try await context.transport.stream(Transfer(request: URLRequest(url: refused)))
            } throws: { error in
                guard case .schemeNotAllowed = error as? CourierError else { return false }
                return true
            }
            let hostless = try #require(URL(string: "http:///x"))
            await #expect {
                try await context.transport.send(Transfer(request: URLRequest(url: hostless)))
            } throws: { error in
                guard case .requestMapping = error as? CourierError else { return false }
                return true
            }
        },
        Check("a request to a scheme that is not allowed is never sent") { context in
            var target = context.fault("ok")
            target.baseURL = try #require(URL(string: "ftp://127.0.0.1:9/"))
            await #expect {
                try await context.provider().request(target)
            } throws: { error in
                guard case .schemeNotAllowed = error as? CourierError else { return false }
                return true
            }
        },
    ]
}
