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
}
