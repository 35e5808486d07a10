import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport's head (`Response.init(statusCode:data:request:url:httpVersion:headerFields:…)`):
/// an array is read through its buffer, any other sequence element by element (issue 29); both
/// give the same head.
@Suite struct ResponseHeadFieldsTests {
    static var fields: [(String, String)] {
        [
            ("Set-Cookie", "a=1"), ("Content-Type", "application/json"), ("set-cookie", "b=2"),
            ("X-Empty", ""), ("SET-COOKIE", "c=3"),
        ]
    }

    func head(_ fields: some Sequence<(String, String)>) throws -> Response {
        let url = try #require(URL(string: "https://api.example.com/items"))
        return Response(statusCode: 200, data: Data(), request: URLRequest(url: url), url: url, headerFields: fields)
    }

    @Test func anArrayAndAnyOtherSequenceGiveTheSameHead() throws {
        // `AnySequence` has no contiguous storage: the element-by-element path.
        let heads = [try head(Self.fields), try head(AnySequence(Self.fields))]
        for head in heads {
            #expect(head.value(forHTTPHeaderField: "set-cookie") == "a=1, b=2, c=3")
            #expect(head.value(forHTTPHeaderField: "content-TYPE") == "application/json")
            #expect(head.value(forHTTPHeaderField: "x-empty") == "")
            #expect(head.value(forHTTPHeaderField: "Content-Length") == nil)
            let built = try #require(head.response)
            #expect(built.value(forHTTPHeaderField: "Set-Cookie") == "a=1, b=2, c=3")
            #expect(built.allHeaderFields.count == 3)
        }
    }

    /// `expectedContentLength`: what the server announced, digits only, repeats joined first.
    @Test func theAnnouncedLengthIsDigitsOrNothing() throws {
        let cases: [([(String, String)], Int64)] = [
            ([("Content-Length", "42")], 42), ([("content-length", " 42\t")], 42), ([], -1),
            ([("Content-Length", "+42")], -1), ([("Content-Length", "42"), ("CONTENT-LENGTH", "42")], -1),
            ([("Content-Length", "4e1")], -1), ([("Content-Length", "")], -1),
            ([("Content-Length", "99999999999999999999")], -1),
        ]
        for (fields, expected) in cases {
            #expect(try head(fields).expectedContentLength == expected, "\(fields)")
            #expect(try head(AnySequence(fields)).expectedContentLength == expected, "\(fields)")
        }
    }

    @Test func noFieldsGiveAnEmptyHead() throws {
        for head in [try head([]), try head(AnySequence([]))] {
            #expect(head.value(forHTTPHeaderField: "Content-Type") == nil)
            #expect(try #require(head.response).allHeaderFields.isEmpty)
        }
    }

    /// An array whose names are distinct is the head's own storage, not copied (issue 29): the
    /// fields are the same buffer.
    @Test func anArrayOfDistinctNamesIsKeptAsItIs() throws {
        let url = try #require(URL(string: "https://api.example.com/items"))
        let fields = [
            ("Content-Type", "application/json"), ("Content-Length", "2"), ("ETag", "\"x\""), ("Date", "now"),
        ]
        let head = LazyHTTPResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: fields)
        let kept = head.fields.withUnsafeBufferPointer { $0.baseAddress }
        #expect(kept == fields.withUnsafeBufferPointer { $0.baseAddress })
        #expect(head.value(forHTTPHeaderField: "etag") == "\"x\"")
        #expect(head.expectedContentLength == 2)
        // A repeated name (in another case) is joined into an array of its own.
        let repeated = fields + [("content-type", "text/plain")]
        let joined = LazyHTTPResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: repeated)
        #expect(joined.fields.count == 4)
        #expect(joined.value(forHTTPHeaderField: "Content-Type") == "application/json, text/plain")
        #expect(
            joined.fields.withUnsafeBufferPointer { $0.baseAddress }
                != repeated.withUnsafeBufferPointer { $0.baseAddress })
    }

    /// An array that holds far more room than fields is not kept (the room would live as long as
    /// the response): its fields are copied into an array of their own size.
    @Test func anArrayWithMuchMoreRoomThanFieldsIsCopied() throws {
        let url = try #require(URL(string: "https://api.example.com/items"))
        var roomy: [(String, String)] = []
        roomy.reserveCapacity(4_096)
        roomy.append(("Content-Type", "text/plain"))
        roomy.append(("ETag", "1"))
        let head = LazyHTTPResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: roomy)
        #expect(head.fields.capacity < 64)
        #expect(head.value(forHTTPHeaderField: "etag") == "1")
    }

    /// Two names of other bytes that Swift's `String` equates (a precomposed and a decomposed `é`)
    /// stay two fields; the built `HTTPURLResponse` answers the first one's value, as the head
    /// does.
    @Test func canonicallyEquivalentNamesAnswerTheFirstValue() throws {
        let precomposed = "X-Caf\u{E9}"
        let fields = [(precomposed, "first"), ("X-Cafe\u{301}", "second")]
        let built = try head(fields)
        #expect(built.value(forHTTPHeaderField: precomposed) == "first")
        #if os(Linux)
            // FoundationNetworking keeps the name as given; Apple's `HTTPURLResponse` may rewrite or
            // drop a name that is not ASCII, so the built response is checked on Linux only.
            let response = try #require(built.response)
            #expect(response.allHeaderFields.count == 1)
            #expect(response.allHeaderFields.values.first as? String == "first")
        #endif
    }

    /// Past the names a scan checks (`scannedNames`), an array goes through the index of names:
    /// distinct names all stay, a repeat after them is still joined, in either case.
    @Test func longHeadsAreJoinedThroughTheIndex() throws {
        let count = LazyHTTPResponse.scannedNames + 8
        let distinct = (0..<count).map { ("X-Field-\($0)", "\($0)") }
        for fields in [distinct, distinct + [("x-field-3", "again")]] {
            for built in [try head(fields), try head(AnySequence(fields))] {
                #expect(built.value(forHTTPHeaderField: "x-FIELD-\(count - 1)") == "\(count - 1)")
                let expected = fields.count > count ? "3, again" : "3"
                #expect(built.value(forHTTPHeaderField: "X-Field-3") == expected)
                #expect(try #require(built.response).allHeaderFields.count == count)
            }
        }
    }

    /// Random heads (names from a small pool in random case, up to twice `scannedNames` fields,
    /// seeded: the seed is printed) read as a plain join would read them: each name's first
    /// spelling, its values in order joined with ", ", whichever path the head took.
    @Test func randomHeadsAreReadAsAPlainJoin() throws {
        let random = SeededRandom.forTest("randomHeadsAreReadAsAPlainJoin")
        let names = ["Set-Cookie", "Vary", "X-A", "X-B", "Content-Length", "ETag", "Link", "Warning"]
        for _ in 0..<300 {
            let count = random.int(in: 0...(2 * LazyHTTPResponse.scannedNames))
            let fields: [(String, String)] = (0..<count).map { index in
                let name = names[random.int(in: 0...(names.count - 1))]
                let cased = String(name.map { random.bool() ? Character($0.uppercased()) : Character($0.lowercased()) })
                return (cased, "v\(index)")
            }
            var expected: [(String, String)] = []
            for (name, value) in fields {
                if let index = expected.firstIndex(where: { $0.0.lowercased() == name.lowercased() }) {
                    expected[index].1 += ", " + value
                } else {
                    expected.append((name, value))
                }
            }
            for built in [try head(fields), try head(AnySequence(fields))] {
                for (name, value) in expected {
                    #expect(built.value(forHTTPHeaderField: name.uppercased()) == value, "\(fields)")
                }
                let response = try #require(built.response)
                #expect(response.allHeaderFields.count == expected.count, "\(fields)")
            }
        }
    }
}
