import Foundation
import Testing

@testable import Courier

/// `Content-Length` read byte by byte (`1*DIGIT`, spaces and tabs around it), for responses (the
/// body limit, progress) and for the request's own header (ContentLengthTests).
@Suite struct HeaderNumberTests {
    @Test(
        arguments: [
            ("0", 0), ("42", 42), (" 42", 42), ("42\t", 42), ("\t 7 \t", 7), ("0007", 7),
            ("9223372036854775807", Int64.max),
        ] as [(String, Int64)])
    func reads(text: String, expected: Int64) {
        #expect(HeaderNumber.length(text) == expected)
    }

    @Test(arguments: [
        "", " ", "+1", "-1", "1 2", "1,2", "0x10", "1e3", "12a", "١٢", "\u{00A0}12", "12\u{00A0}",
        "9223372036854775808", "99999999999999999999999",
    ])
    func refuses(text: String) {
        #expect(HeaderNumber.length(text) == nil)
    }

    /// A request's own header: digits only, no spaces around them (HTTP/2 and nginx refuse them).
    @Test func aRequestsLengthIsDigitsAlone() {
        #expect(HeaderNumber.plainLength("012") == 12)
        #expect(HeaderNumber.plainLength("9223372036854775807") == Int64.max)
        for text in ["", " 12", "12 ", "\t12", "+12", "1e3", "9223372036854775808"] {
            #expect(HeaderNumber.plainLength(text) == nil, "\(text)")
        }
    }

    /// A response whose `Content-Length` is not a plain number has no announced length (-1),
    /// read the same way from a built `HTTPURLResponse` and from a transport's fields.
    @Test func responsesWithoutALengthReadAsUnknown() throws {
        let url = try #require(URL(string: "https://api.example.com/"))
        for (value, expected) in [("12", Int64(12)), ("+12", -1), (" 12 ", 12), ("twelve", -1)] {
            let built = HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": value])
            #expect(ResponseBodyLimit.contentLength(of: built) == expected, "\(value)")
        }
    }
}
