import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TransportConformance {
    /// Checks that need `scripts/test`'s TLS servers themselves (``TLSTestServers``); part of
    /// ``httpsChecks``, run on a transport that trusts the test CA.
    static let tlsChecks: [Check] = [
        Check("a refused certificate is a typed error with the host and the reason, and nothing is sent") { context in
            let servers: [(String, ServerTrustReason)] = [
                ("COURIER_TLS_EXPIRED_URL", .expired), ("COURIER_TLS_WRONGHOST_URL", .hostnameMismatch),
                ("COURIER_TLS_SELFSIGNED_URL", .selfSigned), ("COURIER_TLS_UNKNOWNCA_URL", .untrustedIssuer),
            ]
            for (name, expected) in servers {
                let base = try #require(TLSTestServers.url(name))
                let marker = "refused-\(UUID().uuidString)"
                var target = context.bin(marker, method: .post, task: .data(Data("secret body".utf8)))
                target.baseURL = base
                do throws(CourierError) {
                    let response = try await context.provider().request(target)
                    Issue.record("\(name): answered \(response.statusCode)")
                } catch {
                    guard case .serverTrust(let host, let reason, _) = error else {
                        Issue.record("\(name): \(error)")
                        continue
                    }
                    #expect(host == base.host, "\(name)")
                    #expect(reason == expected, "\(name)")
                    let text = error.localizedDescription
                    #expect(text.contains(base.host ?? "?") && text.contains(expected.description), "\(text)")
                    #expect(!text.contains("BoringSSL") && !text.contains(".swift") && !text.contains("/"), "\(text)")
                }
                #expect(TLSTestServers.requests(containing: marker).isEmpty, "\(name)")
            }
        },
        Check("a redirect from https to http is refused, and nothing reaches the http server") { context in
            let tls = try #require(TLSTestServers.url)
            let marker = "cleartext-\(UUID().uuidString)"
            var target = context.bin("to-http/anything/\(marker)")
            target.baseURL = tls
            await #expect {
                try await context.provider().request(target)
            } throws: { error in
                guard case .insecureRedirect(let url) = error as? CourierError else { return false }
                return url.scheme == "http" && url.path.hasSuffix(marker)
            }
            #expect(await TLSTestServers.requests(containing: marker, atLeast: 1).count == 1)
            #expect(TLSTestServers.cleartextRequests(containing: marker).isEmpty)
        },
        Check("allowsInsecureRedirects follows a hop to http without a body, never one that repeats it") { context in
            let tls = try #require(TLSTestServers.url)
            let allowing = context.provider(limits: Limits(allowsInsecureRedirects: true))
            let followed = "cleartext-\(UUID().uuidString)"
            var target = context.bin(
                "to-http/anything/\(followed)", headers: ["Authorization": "Bearer secret"])
            target.baseURL = tls
            let echo = try await allowing.request(target).map(Echo.self)
            #expect(echo.url?.hasPrefix("http://") == true)
            // A change of scheme is a change of origin: the credential stays behind.
            #expect(echo.headers.keys.contains { $0.lowercased() == "authorization" } == false)
            #expect(await TLSTestServers.cleartextRequests(containing: followed, atLeast: 1).count == 1)
            let refused = "cleartext-\(UUID().uuidString)"
            var withBody = context.bin("to-http-307/anything/\(refused)", method: .post, task: .data(Data("x".utf8)))
            withBody.baseURL = tls
            await #expect {
                try await allowing.request(withBody)
            } throws: { error in
                guard case .insecureRedirect = error as? CourierError else { return false }
                return true
            }
            #expect(TLSTestServers.cleartextRequests(containing: refused).isEmpty)
        },
        Check("the HTTP version is the one the server saw, and concurrent requests share connections") { context in
            let tls = try #require(TLSTestServers.url)
            let marker = "version-\(UUID().uuidString)"
            var target = context.bin("small.json", task: .parameters(["m": marker], encoding: .queryString))
            target.baseURL = tls
            let response = try await context.provider().request(target)
            let line = try #require(await TLSTestServers.requests(containing: marker, atLeast: 1).first)
            let seen = line.split(separator: " ").dropFirst().first.map(String.init)
            // nginx writes HTTP/2.0 where Courier says HTTP/2; nil: the transport does not say.
            if let version = response.httpVersion {
                #expect(seen?.hasPrefix(version) == true, "\(version) vs \(line)")
                #expect(response.metrics?.attempts.last?.transfer?.httpVersion == version)
            }
            // 64 at once to one host: fewer connections than requests (one, over HTTP/2).
            let batch = "batch-\(UUID().uuidString)"
            let provider = context.provider()
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<64 {
                    var one = context.bin(
                        "small.json", task: .parameters(["b": batch, "i": index], encoding: .queryString))
                    one.baseURL = tls
                    group.addTask { try await provider.request(one).statusCode }
                }
                for try await status in group { #expect(status == 200) }
            }
            let lines = await TLSTestServers.requests(containing: batch, atLeast: 64)
            #expect(lines.count == 64)
            let connections = Set(lines.compactMap { $0.split(separator: " ").first })
            #expect(connections.count < 64)
            // Over HTTP/2, a handful at most: a client may open several before ALPN answers.
            if seen == "HTTP/2.0" { #expect(connections.count <= 8, "\(connections.count) connections") }
        },
    ]
}
