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

/// A body collected as a hostile server might split it (issue 29 keeps a one-chunk body in
/// AsyncHTTPClient's buffer and gathers longer ones): empty chunks anywhere, a body in one-byte
/// chunks, a compressed body split across chunks, limits crossed exactly at a chunk's edge.
@Suite struct ExchangeAttackTests {
    /// 1,760 bytes of text, gzip-compressed (165 bytes; `gzip.compress(body, mtime=0)`).
    static var gzipped: [UInt8] {
        Array(
            Data(
                base64Encoded:
                    "H4sIAAAAAAACA5XRuxHCQBBEQZ8oNgTtDN9wDgGFikNHcWAoewwS0PPb6zrN1xiGIdotSpzbZYn+qtMnyvhuvcezzEuM9+/86Jv6twmsgDWwW2B3wO6BPQB7BPa03iZ4S/CW4C3BW4K3BG8J3hK8JXhL8CbwJvAm8CbwJvAm8CbwJvAm8CbwZvBm8GbwZvBm8GbwZvBm8Gbw5lVvP/hBgKvgBgAA"
            ) ?? Data())
    }

    static var plain: Data {
        Data((0..<40).map { String(format: "line %03d of a body split across many chunks\n", $0) }.joined().utf8)
    }

    func collect(
        _ parts: [[UInt8]], headers: [(String, String)] = [], limits: Limits = .default
    ) async throws -> Data {
        let url = try #require(URL(string: "http://127.0.0.1/body"))
        let response = HTTPClientResponse(
            status: .ok, headers: HTTPHeaders(headers), body: .stream(ExchangeTests.Chunks(parts: parts)))
        let transfer = Transfer(request: URLRequest(url: url), progress: nil, limits: limits)
        let head = try AsyncHTTPClientTransport.head(of: response, request: transfer.request)
        let exchange = Exchange(
            transfer: transfer, response: response, head: head, redirects: 0, responseStart: nil, bytesSent: 0)
        let answer = try await exchange.collect()
        #expect(answer.transferMetrics?.bytesReceived == Int64(answer.data.count))
        return answer.data
    }

    /// Every way of cutting 10 bytes into up to four pieces, with empty pieces anywhere.
    @Test func everySplitWithEmptyChunksAnywhereKeepsTheBytesInOrder() async throws {
        let body = ExchangeTests.bytes(10)
        var splits: [[[UInt8]]] = [[], [[]], [[], []], [[], [], []]]
        for a in 0...10 {
            for b in a...10 {
                for c in b...10 {
                    splits.append([Array(body[..<a]), Array(body[a..<b]), Array(body[b..<c]), Array(body[c...])])
                }
            }
        }
        for parts in splits {
            let data = try await collect(parts)
            #expect(data == Data(parts.flatMap { $0 }), "\(parts.map(\.count))")
        }
    }

    @Test func aBodyOfOneByteChunksArrivesWhole() async throws {
        let body = ExchangeTests.bytes(3000)
        let parts = body.map { [$0] }
        #expect(try await collect(parts, headers: [("Content-Length", "3000")]) == Data(body))
        // An empty chunk between every byte.
        #expect(try await collect(parts.flatMap { [[], $0] }) == Data(body))
    }

    /// A compressed body, its header in odd casing, cut anywhere (one byte at a time, an empty
    /// first chunk, halves), decodes to the same bytes.
    @Test func aCompressedBodySplitAcrossChunksDecodesWhole() async throws {
        let gzipped = Self.gzipped
        try #require(gzipped.count == 165)
        let headers = [("CONTENT-ENCODING", "GZIP"), ("content-length", "165")]
        for parts in [
            [gzipped], gzipped.map { [$0] }, [[]] + [gzipped], [Array(gzipped[..<1]), Array(gzipped[1...])],
            [Array(gzipped[..<82]), [], Array(gzipped[82...]), []],
        ] {
            #expect(try await collect(parts, headers: headers) == Self.plain, "\(parts.count) chunks")
        }
    }

    /// The limit counts decoded bytes: exactly at it passes, one byte under it fails, wherever the
    /// chunks are cut.
    @Test func aDecodedBodyExactlyAtTheLimitPassesAndOneOverFails() async throws {
        let gzipped = Self.gzipped
        let headers = [("Content-Encoding", "gzip")]
        var limits = Limits.default
        for parts in [[gzipped], gzipped.map { [$0] }] {
            limits.maxResponseBytes = Int64(Self.plain.count)
            #expect(try await collect(parts, headers: headers, limits: limits) == Self.plain)
            limits.maxResponseBytes = Int64(Self.plain.count - 1)
            await #expect(throws: CourierError.self) {
                _ = try await collect(parts, headers: headers, limits: limits)
            }
        }
    }

    /// A limit reached exactly at a chunk's end is not crossed, even with empty chunks after it;
    /// one more byte in the next chunk crosses it.
    @Test func aLimitReachedExactlyAtAChunkBoundary() async throws {
        var limits = Limits.default
        limits.maxResponseBytes = 100
        let hundred = ExchangeTests.bytes(100)
        for parts in [
            [hundred], [[], hundred], [Array(hundred[..<50]), Array(hundred[50...])],
            [Array(hundred[..<50]), Array(hundred[50...]), [], []],
        ] {
            #expect(try await collect(parts, limits: limits) == Data(hundred))
        }
        for parts in [[hundred, [1]], [[], hundred, [], [1]], [Array(hundred[..<99]), [1, 2]]] {
            await #expect(throws: CourierError.self) {
                _ = try await collect(parts, limits: limits)
            }
        }
    }

    /// The head's fields, read through an array, keep names that differ by non-letters (or by a
    /// non-ASCII letter's case) apart, and join names that differ only by ASCII case.
    @Test func headFieldsDifferingByNonLettersStayApart() throws {
        var headers = HTTPHeaders()
        headers.add(name: "X@", value: "at")
        headers.add(name: "X`", value: "grave")
        headers.add(name: "content-length", value: "4")
        headers.add(name: "CONTENT-LENGTH", value: "4")
        headers.add(name: "X-Note", value: "café")
        headers.add(name: "x-NOTE", value: "☕")
        let response = HTTPClientResponse(status: .ok, headers: headers)
        let url = try #require(URL(string: "http://127.0.0.1/x"))
        let head = try AsyncHTTPClientTransport.head(of: response, request: URLRequest(url: url))
        #expect(head.value(forHTTPHeaderField: "x@") == "at")
        #expect(head.value(forHTTPHeaderField: "x`") == "grave")
        #expect(head.value(forHTTPHeaderField: "Content-Length") == "4, 4")
        #expect(head.value(forHTTPHeaderField: "x-note") == "café, ☕")
        let built = try #require(head.response)
        #expect(built.value(forHTTPHeaderField: "X@") == "at")
        #expect(built.value(forHTTPHeaderField: "X`") == "grave")
    }
}
