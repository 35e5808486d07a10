import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct EndpointRequestTests {
    private let url = URL(string: "https://api.example.com/items")!

    @Test func plainHasNoBody() throws {
        let request = try Endpoint(url: url, method: .get, task: .plain).urlRequest()
        #expect(request.httpMethod == "GET")
        #expect(request.httpBody == nil)
        #expect(request.url == url)
    }

    @Test func dataIsSentAsIs() throws {
        let body = Data([0x00, 0xFF, 0x10])
        let request = try Endpoint(url: url, method: .put, task: .data(body)).urlRequest()
        #expect(request.httpBody == body)
        #expect(request.httpMethod == "PUT")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func encodableWithDefaultEncoder() throws {
        let request = try Endpoint(url: url, method: .post, task: .json(Item(id: 1, name: "A"))).urlRequest()
        let decoded = try JSONDecoder().decode(Item.self, from: try #require(request.httpBody))
        #expect(decoded == Item(id: 1, name: "A"))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test func encodableWithCustomEncoder() throws {
        struct Payload: Encodable, Sendable {
            var createdAt: Date
            var userName: String
        }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        let payload = Payload(createdAt: Date(timeIntervalSince1970: 10), userName: "ada")
        let request = try Endpoint(url: url, method: .post, task: .json(payload, encoder: encoder)).urlRequest()
        #expect(
            String(decoding: try #require(request.httpBody), as: UTF8.self) == #"{"created_at":10,"user_name":"ada"}"#)
    }

    @Test func encodableKeepsExistingContentType() throws {
        let request = try Endpoint(
            url: url, method: .post, task: .json(Item(id: 1, name: "A")),
            headers: ["CONTENT-TYPE": "application/merge-patch+json"]
        ).urlRequest()
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/merge-patch+json")
    }

    @Test func encodableFailureIsTyped() {
        struct Failing: Encodable, Sendable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "nope"))
            }
        }
        #expect {
            try Endpoint(url: url, method: .post, task: .json(Failing())).urlRequest()
        } throws: { error in
            guard case CourierError.encodableMapping(let underlying) = error else { return false }
            return underlying is EncodingError
        }
    }

    @Test func compositeDataPutsParametersInQueryAndDataInBody() throws {
        let request = try Endpoint(
            url: url, method: .post, task: .compositeData(Data("raw".utf8), urlParameters: ["v": 2, "a": "x y"])
        ).urlRequest()
        #expect(request.url?.absoluteString == "https://api.example.com/items?a=x%20y&v=2")
        #expect(request.httpBody == Data("raw".utf8))
    }

    @Test(arguments: [ParameterEncoding.url, .httpBody, .json])
    func compositeParameters(bodyEncoding: ParameterEncoding) throws {
        let request = try Endpoint(
            url: url, method: .get,
            task: .compositeParameters(bodyParameters: ["b": 1], bodyEncoding: bodyEncoding, urlParameters: ["u": 2])
        ).urlRequest()
        #expect(request.url?.query == "u=2")
        let body = String(decoding: try #require(request.httpBody), as: UTF8.self)
        #expect(body == (bodyEncoding == .json ? #"{"b":1}"# : "b=1"))
    }

    @Test func compositeParametersRejectQueryStringBodyEncoding() {
        #expect {
            try Endpoint(
                url: url, method: .post,
                task: .compositeParameters(bodyParameters: ["b": 1], bodyEncoding: .queryString, urlParameters: [:])
            ).urlRequest()
        } throws: { error in
            guard case CourierError.parameterEncoding(let underlying) = error else { return false }
            return underlying as? ParameterEncodingFailure == .queryStringUsedForBody
        }
    }

    @Test func headersAreApplied() throws {
        let request = try Endpoint(url: url, headers: ["X-Trace": "abc", "Accept": "application/json"]).urlRequest()
        #expect(request.value(forHTTPHeaderField: "x-trace") == "abc")
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/json")
    }

    @Test(arguments: ["X-Evil\r\nInjected: yes", "Bad Name", "", "Naïve"])
    func invalidHeaderNamesThrow(name: String) {
        #expect {
            try Endpoint(url: url, headers: [name: "v"]).urlRequest()
        } throws: { error in
            guard case CourierError.requestMapping = error else { return false }
            return true
        }
    }

    @Test(arguments: ["a\r\nX-Injected: 1", "line\nbreak", "nul\u{0}byte", "carriage\rreturn"])
    func headerValuesWithControlCharactersThrow(value: String) {
        #expect {
            try Endpoint(url: url, headers: ["X-Value": value]).urlRequest()
        } throws: { error in
            guard case CourierError.requestMapping = error else { return false }
            return true
        }
    }

    @Test func headerValuesMayContainTabsAndUnicode() throws {
        let request = try Endpoint(url: url, headers: ["X-Value": "a\tb é"]).urlRequest()
        #expect(request.value(forHTTPHeaderField: "X-Value") == "a\tb é")
    }

    @Test func customMethods() throws {
        let request = try Endpoint(url: url, method: "PROPFIND").urlRequest()
        #expect(request.httpMethod == "PROPFIND")
    }

    @Test(arguments: ["", "GET POST", "DELETE\r\n", "(x)"])
    func invalidMethodNamesThrow(name: String) {
        #expect {
            try Endpoint(url: url, method: HTTPMethod(rawValue: name)).urlRequest()
        } throws: { error in
            guard case CourierError.requestMapping = error else { return false }
            return true
        }
    }

    @Test func methodSemantics() {
        #expect(HTTPMethod.get.isSafe && HTTPMethod.head.isSafe && HTTPMethod.options.isSafe)
        #expect(!HTTPMethod.post.isSafe && !HTTPMethod.put.isSafe)
        #expect(HTTPMethod.put.isIdempotent && HTTPMethod.delete.isIdempotent)
        #expect(!HTTPMethod.post.isIdempotent && !HTTPMethod.patch.isIdempotent)
        #expect(HTTPMethod("PURGE").description == "PURGE")
    }
}
