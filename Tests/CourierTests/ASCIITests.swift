import Testing

@testable import Courier

/// The one set of ASCII case rules that scheme, host and header-name checks share.
struct ASCIITests {
    @Test func onlyTheLettersAToZAreFolded() {
        #expect(ASCII.lowercased(UInt8(ascii: "A")) == UInt8(ascii: "a"))
        #expect(ASCII.lowercased(UInt8(ascii: "Z")) == UInt8(ascii: "z"))
        // The bytes next to A–Z, and a–z themselves, stay as they are.
        for byte in [
            UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "`"), UInt8(ascii: "{"), UInt8(ascii: "a"), 0xC3,
        ] {
            #expect(ASCII.lowercased(byte) == byte)
        }
        #expect((0...255).filter { ASCII.isLetter(UInt8($0)) }.count == 52)
        #expect((0...255).filter { ASCII.isDigit(UInt8($0)) }.count == 10)
    }

    @Test func headerNamesCompareWithoutCaseButNotWithoutPunctuation() {
        #expect(ASCII.equalIgnoringCase("Content-Length", "content-LENGTH"))
        #expect(!ASCII.equalIgnoringCase("Content-Length", "Content-Lengths"))
        // `@` and `` ` `` differ by the case bit but are not letters.
        #expect(!ASCII.equalIgnoringCase("X@", "X`"))
        // No Unicode case mapping: "É" is not "é".
        #expect(!ASCII.equalIgnoringCase("É", "é"))
        // Strings stored inline (up to 15 bytes) and on the heap, equal in length, differing last.
        #expect(ASCII.equalIgnoringCase("Access-Control-Allow-Origin", "access-control-allow-ORIGIN"))
        #expect(!ASCII.equalIgnoringCase("Access-Control-Allow-Origin", "Access-Control-Allow-Origim"))
        #expect(!ASCII.equalIgnoringCase("X-Ab", "X-Ac"))
        #expect(ASCII.equalIgnoringCase("", ""))
    }

    @Test func prefixesAndLowercasedStrings() {
        var text = "HTTPS://Example.com"
        text.withUTF8 { bytes in
            #expect(ASCII.hasPrefix(bytes, lowercase: "https"))
            #expect(ASCII.hasPrefix(bytes, lowercase: "http"))
            #expect(!ASCII.hasPrefix(bytes, lowercase: "wss"))
            #expect(!ASCII.hasPrefix(UnsafeBufferPointer(rebasing: bytes[..<3]), lowercase: "http"))
            #expect(ASCII.lowercasedString(UnsafeBufferPointer(rebasing: bytes[..<5])) == "https")
        }
    }
}
