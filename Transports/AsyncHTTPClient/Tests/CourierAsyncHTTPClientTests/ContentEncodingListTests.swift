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

/// `Content-Encoding` is a list, in the order the codings were applied (RFC 9110 §8.4), and
/// repeated fields are one list: `identity` in it changes nothing, and `gzip, gzip` (a body
/// compressed twice, as a proxy that compresses again sends it) is decoded twice. Anything but a
/// single `gzip` or `deflate` was handed over still compressed, as if it were the body, without an
/// error; libcurl (URLSession on Linux) decodes each of these.
@Suite struct ContentEncodingListTests {
    static var text: Data { ExchangeAttackTests.plain }

    func collect(
        _ body: Data, encodings: [String], slice: Int = 1 << 20, limits: Limits = .default
    ) async throws -> Data {
        var parts: [[UInt8]] = []
        var offset = 0
        while offset < body.count {
            parts.append(Array(body[(body.startIndex + offset)..<(body.startIndex + min(offset + slice, body.count))]))
            offset += slice
        }
        return try await ExchangeAttackTests().collect(
            parts, headers: encodings.map { ("Content-Encoding", $0) }, limits: limits)
    }

    @Test(arguments: [
        ["gzip, identity"], ["identity, gzip"], ["Identity ,GZIP"], ["gzip", "identity"], ["identity", "gzip"],
        ["gzip,"], [", gzip"],
    ])
    func identityInTheListChangesNothing(encodings: [String]) async throws {
        let body = try compress(Self.text, windowBits: 31)
        #expect(try await collect(body, encodings: encodings) == Self.text)
    }

    @Test(arguments: [1, 7, 1 << 20])
    func aBodyCompressedTwiceIsDecodedTwice(slice: Int) async throws {
        let twice = try compress(compress(Self.text, windowBits: 31), windowBits: 31)
        #expect(try await collect(twice, encodings: ["gzip, gzip"], slice: slice) == Self.text)
        #expect(try await collect(twice, encodings: ["gzip", "x-gzip"], slice: slice) == Self.text)
        // Applied in order: deflate first, then gzip; decoded the other way round.
        let mixed = try compress(compress(Self.text, windowBits: 15), windowBits: 31)
        #expect(try await collect(mixed, encodings: ["deflate, gzip"], slice: slice) == Self.text)
    }

    /// The limits count the bytes the last decoding hands over.
    @Test func theLimitCountsTheFullyDecodedBytes() async throws {
        let twice = try compress(compress(Self.text, windowBits: 31), windowBits: 31)
        var limits = Limits.default
        limits.maxResponseBytes = Int64(Self.text.count)
        #expect(try await collect(twice, encodings: ["gzip, gzip"], limits: limits) == Self.text)
        limits.maxResponseBytes -= 1
        await #expect(throws: CourierError.self) {
            _ = try await collect(twice, encodings: ["gzip, gzip"], limits: limits)
        }
    }

    @Test func aBodyCompressedTwiceAndCutShortIsAnError() async throws {
        let twice = try compress(compress(Self.text, windowBits: 31), windowBits: 31)
        await #expect(throws: URLError.self) {
            _ = try await collect(twice.prefix(twice.count - 4), encodings: ["gzip, gzip"])
        }
    }

    /// A coding Courier does not decode anywhere in the list: the body is handed over as it came,
    /// as for a single unknown coding.
    @Test func aListWithAnUnknownCodingIsHandedOverAsItCame() async throws {
        let body = try compress(Self.text, windowBits: 31)
        #expect(try await collect(body, encodings: ["br, gzip"]) == body)
        #expect(Inflater(contentEncoding: "identity, identity") == nil)
        #expect(Inflater(contentEncoding: " , ") == nil)
    }
}
