import AsyncHTTPClient
import CCourierZlib
import Courier
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import CourierAsyncHTTPClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Decodes `data` fed in slices of `slice` bytes; returns the pieces.
func inflate(_ data: Data, encoding: String, slice: Int) throws -> (pieces: [Data], ended: Bool) {
    let inflater = try #require(Inflater(contentEncoding: encoding))
    var pieces: [Data] = []
    var offset = 0
    while offset < data.count {
        let part = data[(data.startIndex + offset)..<(data.startIndex + min(offset + slice, data.count))]
        try part.withUnsafeBytes { bytes in try inflater.decode(bytes) { pieces.append($0) } }
        offset += slice
    }
    return (pieces, inflater.ended)
}

struct InflaterTests {
    static let text = Data((0..<4000).map { "line \($0): the quick brown fox\n" }.joined().utf8)

    @Test(arguments: [("gzip", Int32(31)), ("x-gzip", 31), ("deflate", 15), ("deflate", -15), ("GZip", 31)])
    func decodesWhatZlibEncoded(encoding: String, windowBits: Int32) throws {
        let compressed = try compress(Self.text, windowBits: windowBits)
        for slice in [1, 7, 4096, compressed.count] where slice > 1 || compressed.count < 200_000 {
            let (pieces, ended) = try inflate(compressed, encoding: encoding, slice: slice)
            #expect(pieces.reduce(into: Data()) { $0.append($1) } == Self.text, "slice \(slice)")
            #expect(ended)
        }
    }

    @Test func aBombComesOutInBoundedPieces() throws {
        let zeros = Data(count: 32 << 20)
        let bomb = try compress(zeros, windowBits: 31)
        #expect(bomb.count < 64 << 10)
        let (pieces, ended) = try inflate(bomb, encoding: "gzip", slice: bomb.count)
        #expect(ended)
        #expect(pieces.allSatisfy { $0.count <= Inflater.pieceSize })
        #expect(pieces.reduce(0) { $0 + $1.count } == zeros.count)
    }

    @Test func aPieceHandlerThatThrowsStopsTheDecoding() throws {
        struct Enough: Error {}
        let bomb = try compress(Data(count: 8 << 20), windowBits: 31)
        let inflater = try #require(Inflater(contentEncoding: "gzip"))
        var seen = 0
        #expect(throws: Enough.self) {
            try bomb.withUnsafeBytes { bytes in
                try inflater.decode(bytes) { piece in
                    seen += piece.count
                    if seen > 1 << 20 { throw Enough() }
                }
            }
        }
        #expect(seen <= (1 << 20) + Inflater.pieceSize)
    }

    @Test func corruptDataIsAnError() throws {
        let garbage = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        for encoding in ["gzip", "deflate"] {
            #expect(throws: URLError.self) { _ = try inflate(garbage, encoding: encoding, slice: 100) }
        }
    }

    @Test func aTruncatedBodyDoesNotEnd() throws {
        let compressed = try compress(Self.text, windowBits: 31)
        let (_, ended) = try inflate(compressed.prefix(compressed.count / 2), encoding: "gzip", slice: 1000)
        #expect(!ended)
    }

    @Test func otherEncodingsAreNotDecoded() {
        for encoding in [nil, "", "identity", "br", "zstd", "g zip", "gzip, br"] as [String?] {
            #expect(Inflater(contentEncoding: encoding) == nil)
        }
    }
}
