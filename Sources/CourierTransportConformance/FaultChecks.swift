import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TransportConformance {
    static let cancellationChecks: [Check] = [
        Check("a cancel that arrives before the request starts sends nothing") { context in
            let id = UUID().uuidString
            let target = context.fault("stream-watch", task: .parameters(["id": id], encoding: .queryString))
            let outcome = await Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await context.provider().request(target)
            }.result
            #expect(isCancelled(outcome))
            let state = try await context.provider().request(
                context.fault("stream-closed", task: .parameters(["id": id], encoding: .queryString))
            ).map(WatchState.self)
            #expect(state.state == "unknown")
        },
        Check("cancelling a request while its body arrives throws cancelled and closes the connection") { context in
            let id = UUID().uuidString
            let target = context.fault("stream-watch", task: .parameters(["id": id], encoding: .queryString))
            let request = Task { try await context.provider().request(target) }
            // Cancelled once the server is writing the body (asked a bounded number of times).
            for _ in 0..<200 {
                let state = try await context.provider().request(
                    context.fault("stream-closed", task: .parameters(["id": id, "wait": 0], encoding: .queryString))
                ).map(WatchState.self)
                if state.writes > 0 { break }
            }
            request.cancel()
            #expect(isCancelled(await request.result))
            #expect(try await watchedStreamEnd(id, context: context).closed)
        },
        Check("a deadline covers the head and the body") { context in
            for path in ["stall-headers", "stall-body", "short-body"] {
                await #expect {
                    try await context.provider().request(context.fault(path, timeout: .seconds(1)))
                } throws: { error in
                    guard case .timedOut(let limit) = error as? CourierError else { return false }
                    return limit == .seconds(1)
                }
            }
        },
    ]

    static let faultChecks: [Check] = [
        // Malformed HTTP: plain HTTP only (a TLS-terminating proxy would repair or refuse it).
        Check("a broken response ends in a network error, never a body", overTLS: false) { context in
            for path in ["close-mid-body", "reset", "bad-status", "bad-headers", "bad-chunked", "huge-header"] {
                do throws(CourierError) {
                    let response = try await context.provider().request(context.fault(path))
                    Issue.record("\(path): answered \(response.statusCode) with \(response.data.count) bytes")
                } catch {
                    #expect(urlErrorCode(error) != nil, "\(path): \(error)")
                }
            }
        },
        Check(
            "a body cut short of its Content-Length is a lost connection, which the default policy retries",
            overTLS: false
        ) { context in
            // As Apple's URLSession reports it: `.networkConnectionLost`, so that
            // `RetryPolicy.default` retries it (and a resumable download resumes) on every transport.
            do throws(CourierError) {
                let response = try await context.provider().request(context.fault("close-mid-body"))
                Issue.record("answered \(response.statusCode) with \(response.data.count) bytes")
            } catch {
                #expect(urlErrorCode(error) == .networkConnectionLost, "\(error)")
                #expect(RetryPolicy.default.isRetryable(error), "\(error)")
            }
        },
        Check("a streamed body cut short of its Content-Length ends its reader with a lost connection", overTLS: false)
        { context in
            // The same error as a whole body's (above), so a stream's reader handles one error on
            // every transport.
            let stream = try await context.provider().stream(context.fault("close-mid-body"))
            var received = 0
            do {
                for try await chunk in stream.chunks { received += chunk.count }
                Issue.record("the stream ended without an error after \(received) bytes")
            } catch {
                let code = (error as? CourierError).flatMap(urlErrorCode)
                #expect(code == .networkConnectionLost, "\(error)")
            }
            #expect(received <= 100)
        },
        Check(
            "a 401 whose body breaks off is a network error, never the part that came: in memory, to a file, streamed",
            overTLS: false
        ) { context in
            // A challenge the transport answers (URLSession refuses it without a credential) makes
            // the 401 the answer only once its body is whole: cut short of its Content-Length, or
            // in the middle of a chunk, it fails as any cut body does.
            for path in ["challenge-cut", "challenge-cut-chunked"] {
                do throws(CourierError) {
                    let response = try await context.provider().request(context.fault(path))
                    Issue.record("\(path): answered \(response.statusCode) with \(response.data.count) bytes")
                } catch {
                    #expect(urlErrorCode(error) != nil, "\(path): \(error)")
                    if path == "challenge-cut" { #expect(urlErrorCode(error) == .networkConnectionLost, "\(error)") }
                }
                let folder = try ScratchFolder()
                defer { folder.remove() }
                let destination = DownloadDestination.folder(folder.url) { _, _ in "denied.txt" }
                do throws(CourierError) {
                    let response = try await context.provider().request(
                        context.fault(path, task: .download(destination)))
                    Issue.record("\(path): downloaded \(response.statusCode)")
                } catch {
                    #expect(urlErrorCode(error) != nil, "\(path), to a file: \(error)")
                }
                #expect(folder.contents.isEmpty, "\(path)")
                let stream = try await context.provider().stream(context.fault(path))
                #expect(stream.statusCode == 401)
                do {
                    for try await _ in stream.chunks {}
                    Issue.record("\(path): the stream ended without an error")
                } catch {
                    #expect((error as? CourierError).flatMap(urlErrorCode) != nil, "\(path), streamed: \(error)")
                }
            }
        },
        Check("a cut POST is not retried by the default policy", overTLS: false) { context in
            let target = context.fault("close-mid-body", method: .post, task: .data(Data("x".utf8)))
            do throws(CourierError) {
                let response = try await context.provider().request(target)
                Issue.record("answered \(response.statusCode) with \(response.data.count) bytes")
            } catch {
                #expect(urlErrorCode(error) == .networkConnectionLost, "\(error)")
                var post = URLRequest(url: context.servers.fault)
                post.httpMethod = "POST"
                #expect(RetryPolicy.default.decision(after: error, request: post, attempt: 1) == .doNotRetry)
            }
        },
        Check("a malformed chunked body that also announces a Content-Length is not a lost connection", overTLS: false)
        { context in
            // Transfer-Encoding wins over Content-Length (RFC 9112 §6.3): the length announced
            // says nothing about a shortfall, and a malformed body must not be retried as a cut.
            let target = context.fault("hostile-length", task: .parameters(["case": "te-cl"], encoding: .queryString))
            do throws(CourierError) {
                let response = try await context.provider().request(target)
                Issue.record("answered \(response.statusCode) with \(response.data.count) bytes")
            } catch {
                #expect(urlErrorCode(error) != nil, "\(error)")
                #expect(urlErrorCode(error) != .networkConnectionLost, "\(error)")
            }
        },
        Check("a chunked answer that also announces a Content-Length is refused", overTLS: false) { context in
            // Both framings on one answer: a sign of response splitting or smuggling, "ought to
            // be handled as an error" (RFC 9112 §6.3); both transports refuse it the same way.
            let target = context.fault(
                "hostile-length", task: .parameters(["case": "te-cl-ok", "n": 100], encoding: .queryString))
            do throws(CourierError) {
                let response = try await context.provider().request(target)
                Issue.record("answered \(response.statusCode) with \(response.data.count) bytes")
            } catch {
                #expect(urlErrorCode(error) == .badServerResponse, "\(error)")
            }
        },
        Check("a HEAD answer announcing a body it does not send is complete", overTLS: false) { context in
            let target = context.fault(
                "hostile-length", method: .head, task: .parameters(["case": "cut"], encoding: .queryString))
            let response = try await context.provider().request(target)
            #expect(response.statusCode == 200)
            #expect(response.data.isEmpty)
        },
        Check("a 204 or 304 announcing a body is complete without one, whatever follows it", overTLS: false) {
            context in
            // Neither has a body (RFC 9110 §15.3.5, §15.4.5): the Content-Length and any bytes after
            // the head are no part of it, and the connection closing is no cut.
            for status in [204, 304] {
                let target = context.fault(
                    "hostile-length", task: .parameters(["case": "cut", "status": status], encoding: .queryString))
                let response = try await context.provider().request(target)
                #expect(response.statusCode == status)
                #expect(response.data.isEmpty, "\(status)")
            }
        },
        Check("a HEAD, 204 or 304 answer naming a gzip encoding is complete without a body", overTLS: false) {
            context in
            // No compressed byte arrives, so none is cut short (AsyncHTTPClientTransport took the
            // missing body for a truncated one: a 304 revalidating a gzipped entity failed).
            let head = context.fault(
                "hostile-length", method: .head,
                task: .parameters(["case": "cut", "gzip": 1], encoding: .queryString))
            let answer = try await context.provider().request(head)
            #expect(answer.statusCode == 200)
            #expect(answer.data.isEmpty)
            #expect(answer.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
            for status in [204, 304] {
                let target = context.fault(
                    "hostile-length",
                    task: .parameters(["case": "cut", "status": status, "gzip": 1], encoding: .queryString))
                let response = try await context.provider().request(target)
                #expect(response.statusCode == status)
                #expect(response.data.isEmpty, "\(status)")
            }
        },
        Check("a gzip body of several members is decoded whole or refused, never cut to its first member") {
            context in
            // RFC 1952 §2.2: a gzip body is a series of members. AsyncHTTPClientTransport decoded
            // the first and dropped the rest without an error; FoundationNetworking's libcurl
            // refuses what follows the first member. Either way, no body is silently cut.
            for tail in ["", "zeros"] {
                let target = context.fault(
                    "gzip-members", task: .parameters(["n": 3, "tail": tail], encoding: .queryString))
                let whole = (0..<3).map { String(repeating: "member \($0)\n", count: 1000) }.joined()
                do throws(CourierError) {
                    let response = try await context.provider().request(target)
                    #expect(response.statusCode == 200)
                    #expect(
                        String(decoding: response.data, as: UTF8.self) == whole,
                        "tail \(tail): \(response.data.count) of \(whole.utf8.count) bytes")
                } catch {
                    #expect(urlErrorCode(error) != nil, "tail \(tail): \(error)")
                }
            }
        },
        Check("a gzip body cut short of its Content-Length is a network error, never a body", overTLS: false) {
            context in
            // Which one differs: AsyncHTTPClient counts the bytes on the wire and says
            // `.networkConnectionLost`; FoundationNetworking hands over decoded bytes only, and its
            // `.unknown` stays (a corrupt encoding reports the same), so it is not retried there.
            let target = context.fault(
                "hostile-length", task: .parameters(["case": "cut", "gzip": 1, "n": 1000], encoding: .queryString))
            do throws(CourierError) {
                let response = try await context.provider().request(target)
                Issue.record("answered \(response.statusCode) with \(response.data.count) bytes")
            } catch {
                #expect(urlErrorCode(error) != nil, "\(error)")
            }
        },
        Check("a request's own zero-led Content-Length reaches the server; one with spaces is refused") { context in
            let body = Data("hello world!".utf8)
            let response = try await context.provider().request(
                context.fault("echo", method: .post, task: .data(body), headers: ["Content-Length": "012"]))
            let echo = try #require(
                try? JSONDecoder().decode(FaultEcho.self, from: response.data),
                "\(response.statusCode) \(String(decoding: response.data.prefix(300), as: UTF8.self))")
            #expect(echo.body == "hello world!")
            let lengths = echo.headers.filter { $0.key.lowercased() == "content-length" }.map(\.value)
            #expect(lengths.count == 1 && Int(lengths[0]) == 12, "\(lengths)")
            // Spaces around it: HTTP/2 and nginx (400) refuse them, so nothing is sent.
            await #expect {
                try await context.provider().request(
                    context.fault("echo", method: .post, task: .data(body), headers: ["Content-Length": " 12 "]))
            } throws: { error in
                guard case .requestMapping(let message) = error as? CourierError else { return false }
                return message.contains("Content-Length")
            }
        },
        Check("a hostile Content-Length never lets a body past its limit", overTLS: false) { context in
            // Duplicates, signs, overflowing and non-ASCII digits, plain and gzip-encoded: each
            // body (1,000 bytes decoded) fails, or arrives within the 100-byte limit; none crashes.
            let provider = context.provider(limits: Limits(maxResponseBytes: 100))
            // (Not 2^63 - 512 through 2^63 - 1: FoundationNetworking itself traps on those, before
            // any delegate sees the head; see ChoosingATransport.)
            let kinds = ["dup-same", "dup-diff", "plus", "minus", "huge", "tab", "unicode", "zeros", "cut", "value"]
            for kind in kinds {
                for gzip in [0, 1] {
                    let target = context.fault(
                        "hostile-length",
                        task: .parameters(
                            ["case": kind, "n": 1000, "gzip": gzip, "cl": 1 << 62], encoding: .queryString))
                    do throws(CourierError) {
                        let response = try await provider.request(target)
                        Issue.record("\(kind) gzip=\(gzip): answered \(response.data.count) bytes")
                    } catch {
                        switch error {
                        case .limitExceeded, .underlying: break
                        default: Issue.record("\(kind) gzip=\(gzip): \(error)")
                        }
                    }
                }
            }
        },
        Check("an absurd Content-Length with no limit set is not allocated ahead of the body", overTLS: false) {
            context in
            // A careless caller (no body limit) and a hostile server (2^62 bytes announced, 10
            // sent): the body is read as it comes, never reserved whole before it arrives.
            let provider = context.provider(limits: Limits(maxResponseBytes: .max))
            let target = context.fault(
                "hostile-length", task: .parameters(["case": "value", "cl": 1 << 62], encoding: .queryString))
            do throws(CourierError) {
                let response = try await provider.request(target)
                Issue.record("answered \(response.statusCode) with \(response.data.count) bytes")
            } catch {
                #expect(urlErrorCode(error) != nil, "\(error)")
            }
        },
        // A hostile head, as large as AsyncHTTPClient lets through (80 KiB): read whole, every field
        // kept, repeats joined. Reading it once scanned the earlier names for each field, which took
        // 28.7 s for this head in a debug build.
        Check("a head of thousands of fields is read whole, repeats joined", overTLS: false) { context in
            func flood(fields: Int, cookies: Int) -> Conformance {
                context.fault("header-flood", task: .parameters(["n": fields, "c": cookies], encoding: .queryString))
            }
            let distinct = try await context.provider().request(flood(fields: 8_000, cookies: 0))
            #expect(distinct.statusCode == 200)
            #expect(distinct.data == Data("ok".utf8))
            #expect(distinct.value(forHTTPHeaderField: "F0") == "v")
            // The names are numbered in base 36: the 8,000th is "f667".
            #expect(distinct.value(forHTTPHeaderField: "F667") == "v")
            #expect(distinct.value(forHTTPHeaderField: "F668") == nil)
            let repeated = try await context.provider().request(flood(fields: 0, cookies: 5_000))
            let cookies = try #require(repeated.value(forHTTPHeaderField: "set-cookie"))
            // 5,000 values "c" joined by ", ".
            #expect(cookies.utf8.count == 5_000 * 3 - 2)
        },
        Check("bytes past Content-Length are ignored", overTLS: false) { context in
            let response = try await context.provider().request(context.fault("long-body"))
            #expect(response.data.count == 10)
        },
        Check("a refused connection is a network error") { context in
            // A port nothing listens on: bound, then closed.
            var target = context.fault("ok")
            target.baseURL = try #require(URL(string: "\(context.servers.fault.scheme ?? "http")://127.0.0.1:9/"))
            do throws(CourierError) {
                _ = try await context.provider().request(target)
                Issue.record("a request to a closed port answered")
            } catch {
                #expect(urlErrorCode(error) == .cannotConnectToHost, "\(error)")
            }
        },
    ]
}

/// `/stream-closed`'s answer.
struct WatchState: Decodable {
    var closed: Bool
    var state: String
    var writes: Int
}

/// Whether `result` is the failure ``CourierError/cancelled``.
func isCancelled<T>(_ result: Result<T, any Error>) -> Bool {
    guard case .failure(let error) = result, case .cancelled = error as? CourierError else { return false }
    return true
}
