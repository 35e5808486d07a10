import Foundation
import Testing

@testable import Courier

/// The one reading of `Content-Encoding` (RFC 9110 §8.4) that both transports and the body limits
/// share: a comma-separated list, matched without case, `identity` and empty members left out.
@Suite struct ContentCodingTests {
    @Test(
        arguments: [
            (String?.none, [ContentCoding]()), ("", []), ("identity", []), ("IDENTITY", []),
            ("identity, identity", []), (" , ,", []), (",identity,", []),
            ("gzip", [.gzip]), ("x-gzip", [.gzip]), ("GZip", [.gzip]), (" gzip\t", [.gzip]),
            ("deflate", [.deflate]), ("gzip, identity", [.gzip]), ("identity,deflate", [.deflate]),
            ("deflate, gzip", [.deflate, .gzip]), ("gzip, gzip", [.gzip, .gzip]),
            ("br", [.other("br")]), ("BR", [.other("br")]), ("gzip, zstd", [.gzip, .other("zstd")]),
            // Spaces inside a member are part of its name: no coding is made up from them.
            ("g zip", [.other("g zip")]),
        ] as [(String?, [ContentCoding])])
    func readsTheListInTheOrderTheCodingsWereApplied(value: String?, expected: [ContentCoding]) {
        #expect(ContentCoding.list(value) == expected)
        #expect(ContentCoding.isEncoded(value) == !expected.isEmpty)
    }

    /// Only A–Z fold: a name with other letters is not taken for a coding Courier decodes.
    @Test func onlyASCIILettersFold() {
        #expect(ContentCoding.list("GZİP") == [.other("gzİp")])
        #expect(ContentCoding.list("gzip\u{00A0}") == [.other("gzip\u{00A0}")])
    }
}
