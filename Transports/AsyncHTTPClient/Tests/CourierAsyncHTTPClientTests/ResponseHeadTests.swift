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

struct ResponseHeadTests {
    @Test func repeatedFieldsAreJoinedUnderTheFirstSpelling() throws {
        var headers = HTTPHeaders()
        headers.add(name: "Set-Cookie", value: "a=1")
        headers.add(name: "set-cookie", value: "b=2")
        headers.add(name: "Content-Type", value: "application/json")
        let response = HTTPClientResponse(status: .created, headers: headers)
        let url = try #require(URL(string: "http://127.0.0.1/x"))
        let head = try AsyncHTTPClientTransport.head(of: response, request: URLRequest(url: url))
        #expect(head.statusCode == 201)
        #expect(head.value(forHTTPHeaderField: "set-cookie") == "a=1, b=2")
        #expect(head.value(forHTTPHeaderField: "CONTENT-TYPE") == "application/json")
        let built = try #require(head.response)
        #expect(built.value(forHTTPHeaderField: "set-cookie") == "a=1, b=2")
        #expect(built.url == url)
    }
}
