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
