import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import CourierAsyncHTTPClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Bytes after the end of a compressed body (padding, garbage) are ignored, and so they are no
/// longer read: they decode to nothing, so no limit on decoded bytes counts them, and a server
/// that sent them without end held the request for ever (the reading went on, byte after
/// ignored byte, under every limit).
@Suite struct BytesAfterTheBodyTests {
    /// How many chunks a body handed over.
    actor Pulls {
        var count = 0
        func add() { count += 1 }
    }

    /// `body`, then `tail` again and again (`times` times): what AsyncHTTPClient would hand over
    /// from a server that pads a compressed body without end.
    struct PaddedBody: AsyncSequence, Sendable {
        let body: [[UInt8]]
        let tail: [UInt8]
        let times: Int
        let pulls: Pulls

        struct AsyncIterator: AsyncIteratorProtocol {
            let sequence: PaddedBody
            var index = 0

            mutating func next() async -> ByteBuffer? {
                defer { index += 1 }
                guard index < sequence.body.count + sequence.times else { return nil }
                await sequence.pulls.add()
                return ByteBuffer(bytes: index < sequence.body.count ? sequence.body[index] : sequence.tail)
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(sequence: self) }
    }

    static let times = 4096

    func exchange(_ body: PaddedBody, encoding: String) throws -> Exchange {
        let url = try #require(URL(string: "http://127.0.0.1/padded"))
        let response = HTTPClientResponse(
            status: .ok, headers: HTTPHeaders([("Content-Encoding", encoding)]), body: .stream(body))
        let transfer = Transfer(request: URLRequest(url: url), progress: nil, limits: .default)
        let head = try AsyncHTTPClientTransport.head(of: response, request: transfer.request)
        return Exchange(
            transfer: transfer, response: response, head: head, redirects: 0, responseStart: nil, bytesSent: 0)
    }

    /// Bodies with what follows them: a gzip body then zeros, one then a lone first byte of the
    /// magic number, a zlib-wrapped and a raw deflate body then text.
    static var cases: [(encoding: String, compressed: Data, tail: [UInt8])] {
        get throws {
            let text = ExchangeAttackTests.plain
            return [
                ("gzip", try compress(text, windowBits: 31), Array(repeating: 0, count: 16 << 10)),
                ("gzip", try compress(text, windowBits: 31), [0x1F]),
                ("deflate", try compress(text, windowBits: 15), Array("padding".utf8)),
                ("deflate", try compress(text, windowBits: -15), Array("padding".utf8)),
            ]
        }
    }

    @Test(arguments: [1, 3]) func aCollectedBodyIsNotReadPastItsEnd(split: Int) async throws {
        for (encoding, compressed, tail) in try Self.cases {
            let parts = stride(from: 0, to: compressed.count, by: (compressed.count + split - 1) / split).map {
                Array(compressed[$0..<min($0 + (compressed.count + split - 1) / split, compressed.count)])
            }
            let pulls = Pulls()
            let body = PaddedBody(body: parts, tail: tail, times: Self.times, pulls: pulls)
            let answer = try await exchange(body, encoding: encoding).collect()
            #expect(answer.data == ExchangeAttackTests.plain, "\(encoding) \(tail.count)")
            // The compressed chunks, the chunk that went past the end, and at most one more (a
            // lone 0x1F is not yet past the end).
            #expect(await pulls.count <= parts.count + 2, "\(encoding) \(tail.count)")
        }
    }

    @Test func aStreamedBodyIsNotReadPastItsEnd() async throws {
        for (encoding, compressed, tail) in try Self.cases {
            let pulls = Pulls()
            let body = PaddedBody(body: [Array(compressed)], tail: tail, times: Self.times, pulls: pulls)
            let streamed = try exchange(body, encoding: encoding).stream()
            var data = Data()
            for try await chunk in streamed.body { data.append(chunk) }
            #expect(data == ExchangeAttackTests.plain, "\(encoding) \(tail.count)")
            #expect(await pulls.count <= 3, "\(encoding) \(tail.count)")
        }
    }

    /// A body that ends with its compressed stream is read to its end, as before.
    @Test func aBodyWithNothingAfterItIsReadToItsEnd() async throws {
        for (encoding, compressed, _) in try Self.cases {
            let pulls = Pulls()
            let body = PaddedBody(body: [Array(compressed), []], tail: [], times: 0, pulls: pulls)
            let answer = try await exchange(body, encoding: encoding).collect()
            #expect(answer.data == ExchangeAttackTests.plain)
            #expect(await pulls.count == 2)
        }
    }
}
