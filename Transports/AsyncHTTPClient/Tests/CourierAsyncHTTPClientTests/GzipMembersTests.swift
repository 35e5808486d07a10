import Foundation
import Testing

@testable import CourierAsyncHTTPClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A gzip body is a series of members (RFC 1952 §2.2): a server that concatenates gzipped pieces
/// (pre-compressed fragments, a gzip stream flushed as separate members) sends one body. Every
/// member is decoded, wherever the chunks cut them; the body is complete only at a member's end.
/// (Only the first was decoded and the rest dropped without an error: a body silently cut.) Bytes
/// after the last member that do not start another (padding, garbage) are still ignored.
@Suite struct GzipMembersTests {
    static var first: Data { Data((0..<300).map { "first member, line \($0)\n" }.joined().utf8) }
    static var second: Data { Data((0..<300).map { "second member, line \($0)\n" }.joined().utf8) }

    @Test(arguments: [1, 7, 100, 1 << 20])
    func everyMemberIsDecodedWhateverTheChunks(slice: Int) throws {
        let body =
            try compress(Self.first, windowBits: 31) + compress(Self.second, windowBits: 31)
            + compress(Data("third".utf8), windowBits: 31)
        let (pieces, ended) = try inflate(body, encoding: "gzip", slice: slice)
        #expect(Data(pieces.joined()) == Self.first + Self.second + Data("third".utf8))
        #expect(ended)
    }

    @Test(arguments: [1, 100, 1 << 20])
    func aSecondMemberCutShortDoesNotEnd(slice: Int) throws {
        let second = try compress(Self.second, windowBits: 31)
        let body = try compress(Self.first, windowBits: 31) + second.prefix(second.count / 2)
        let (pieces, ended) = try inflate(body, encoding: "gzip", slice: slice)
        #expect(!ended)
        #expect(Data(pieces.joined()).starts(with: Self.first))
    }

    @Test(arguments: [1, 100, 1 << 20])
    func bytesAfterTheLastMemberThatStartNoOtherAreIgnored(slice: Int) throws {
        for tail in [Data(repeating: 0, count: 512), Data("GARBAGE".utf8), Data([0x1F, 0x58]), Data([0x1F])] {
            let body = try compress(Self.first, windowBits: 31) + tail
            let (pieces, ended) = try inflate(body, encoding: "gzip", slice: slice)
            #expect(Data(pieces.joined()) == Self.first, "\(tail.prefix(8).map { $0 })")
            // A lone 0x1F may be the start of another member: not yet the end.
            #expect(ended == (tail != Data([0x1F])), "\(tail.prefix(8).map { $0 })")
        }
    }

    @Test func aCorruptSecondMemberIsAnError() throws {
        var second = try compress(Self.second, windowBits: 31)
        second[second.startIndex + 20] ^= 0xFF
        let body = try compress(Self.first, windowBits: 31) + second
        #expect(throws: URLError.self) { _ = try inflate(body, encoding: "gzip", slice: 1000) }
    }

    /// A decompression bomb split into many small members still comes out in bounded pieces.
    @Test func manyMembersComeOutInBoundedPieces() throws {
        let member = try compress(Data(repeating: 0x61, count: 200_000), windowBits: 31)
        let body = (0..<20).reduce(into: Data()) { body, _ in body.append(member) }
        let (pieces, ended) = try inflate(body, encoding: "gzip", slice: 4096)
        #expect(ended)
        #expect(pieces.allSatisfy { $0.count <= Inflater.pieceSize })
        #expect(pieces.reduce(0) { $0 + $1.count } == 20 * 200_000)
    }
}
