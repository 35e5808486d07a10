import Foundation
import Testing

@testable import Courier

/// `UTF8Text.string` stands in for `String(validating:as:)` (macOS 15 / iOS 18 only): it must
/// accept exactly the well-formed UTF-8 that the standard library's validation accepts.
@Suite struct UTF8TextTests {
    static let wellFormed: [[UInt8]] = [
        [], Array("plain ASCII".utf8), Array("é ü ß 漢字 🙂".utf8), [0xEF, 0xBB, 0xBF, 0x41],
        [0xF4, 0x8F, 0xBF, 0xBF], [0x00],
    ]
    static let illFormed: [[UInt8]] = [
        [0xFF], [0xC3], [0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
        [0x41, 0xE2, 0x82], Array("ok".utf8) + [0xFE] + Array("ok".utf8),
    ]

    @Test(arguments: wellFormed) func acceptsWellFormed(bytes: [UInt8]) throws {
        let text = try #require(UTF8Text.string(bytes))
        #expect(Array(text.utf8) == bytes)
        #expect(UTF8Text.string(Data(bytes)) == text)
    }

    @Test(arguments: illFormed) func refusesIllFormed(bytes: [UInt8]) {
        #expect(UTF8Text.string(bytes) == nil)
        #expect(UTF8Text.string(Data(bytes)) == nil)
    }

    @Test func agreesWithTheStandardLibraryOnEveryTwoByteSequence() {
        // Where String(validating:as:) exists (Linux, and Apple from macOS 15), the two agree.
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            var disagreements: [[UInt8]] = []
            for first in UInt8(0xC0)...0xF4 {
                for second in UInt8.min...UInt8.max {
                    let bytes = [first, second]
                    if UTF8Text.string(bytes) != String(validating: bytes, as: UTF8.self) {
                        disagreements.append(bytes)
                    }
                }
            }
            #expect(disagreements.isEmpty)
        }
    }
}
