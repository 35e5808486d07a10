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
/// repeated fields are one list: `identity` in it changes nothing. Anything but a single `gzip` or
/// `deflate` was handed over still compressed, as if it were the body, without an error. A body
/// encoded twice (`gzip, gzip`) is refused rather than undone stage by stage: each stage multiplies
/// what one network read becomes by up to ~1,000 before a limit is counted.
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
    func aBodyEncodedTwiceIsRefused(slice: Int) async throws {
        let twice = try compress(compress(Self.text, windowBits: 31), windowBits: 31)
        let mixed = try compress(compress(Self.text, windowBits: 15), windowBits: 31)
        for (body, encodings) in [
            (twice, ["gzip, gzip"]), (twice, ["gzip", "x-gzip"]), (mixed, ["deflate, gzip"]),
            (twice, ["gzip, identity, gzip"]),
        ] {
            await #expect(throws: URLError.self, "\(encodings)") {
                _ = try await collect(body, encodings: encodings, slice: slice)
            }
        }
    }

    /// A body encoded twice: 64 MiB of zeros, compressed twice. Not one piece is made of it.
    @Test func aBombEncodedTwiceMakesNothing() throws {
        let once = try compress(Data(repeating: 0, count: 64 << 20), windowBits: 31)
        let twice = try compress(once, windowBits: 31)
        let inflater = try #require(Inflater(contentEncoding: "gzip, gzip"))
        var made = 0
        #expect(throws: URLError.self) {
            try twice.withUnsafeBytes { bytes in try inflater.decode(bytes) { made += $0.count } }
        }
        #expect(made == 0)
    }

    /// An answer without a body naming two codings is complete, as one naming a single coding is.
    @Test func anEmptyBodyNamingTwoCodingsIsComplete() async throws {
        #expect(try await collect(Data(), encodings: ["gzip, gzip"]).isEmpty)
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
