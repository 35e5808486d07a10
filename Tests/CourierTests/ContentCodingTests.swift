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

    /// Hostile values: a NUL or a control character is part of the name (no coding is made up by
    /// cutting at it), and a value of 100,000 empty members is read member by member in one pass.
    @Test func hostileValuesNameNoCodingTheyDoNotSpell() {
        #expect(ContentCoding.list("gzip\u{0}") == [.other("gzip\u{0}")])
        #expect(ContentCoding.list("\u{0}gzip, deflate\r") == [.other("\u{0}gzip"), .other("deflate\r")])
        let commas = String(repeating: ",", count: 100_000)
        #expect(ContentCoding.list(commas).isEmpty)
        #expect(!ContentCoding.isEncoded(commas + " \t"))
        #expect(ContentCoding.list(commas + "GZIP" + commas) == [.gzip])
        let many = Array(repeating: "x-gzip", count: 20_000).joined(separator: ",")
        #expect(ContentCoding.list(many) == Array(repeating: .gzip, count: 20_000))
    }

    /// Only A–Z fold: a name with other letters is not taken for a coding Courier decodes.
    @Test func onlyASCIILettersFold() {
        #expect(ContentCoding.list("GZİP") == [.other("gzİp")])
        #expect(ContentCoding.list("gzip\u{00A0}") == [.other("gzip\u{00A0}")])
    }
}
