import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct ParameterEncodingTests {
    private func request(
        _ parameters: Parameters, encoding: ParameterEncoding, method: HTTPMethod = .get,
        headers: [String: String] = [:]
    ) throws -> URLRequest {
        try Endpoint(
            url: URL(string: "https://api.example.com/items")!, method: method,
            task: .parameters(parameters, encoding: encoding), headers: headers
        ).urlRequest()
    }

    private func query(_ parameters: Parameters, _ options: URLEncoding = URLEncoding()) throws -> String? {
        var options = options
        options.destination = .queryString
        return try request(parameters, encoding: .url(options)).url?.query
    }

    @Test func keysAreSortedForDeterministicOutput() throws {
        let parameters: Parameters = ["zeta": 1, "alpha": 2, "mid": 3, "Beta": 4]
        #expect(try query(parameters) == "Beta=4&alpha=2&mid=3&zeta=1")
        for _ in 0..<20 {
            #expect(try query(parameters) == "Beta=4&alpha=2&mid=3&zeta=1")
        }
    }

    @Test func valuesAndKeysAreEscapedPerRFC3986() throws {
        let parameters: Parameters = [
            "q": "swift & concurrency = fun?/#",
            "name with space": "a+b",
            "emoji": "🚀",
            "safe": "AZaz09-._~",
        ]
        #expect(
            try query(parameters)
                == "emoji=%F0%9F%9A%80&name%20with%20space=a%2Bb&q=swift%20%26%20concurrency%20%3D%20fun%3F%2F%23&safe=AZaz09-._~"
        )
    }

    @Test func nestedDictionariesUseBracketedKeys() throws {
        let parameters: Parameters = ["filter": ["status": "open", "owner": ["login": "me"]], "page": 1]
        #expect(
            try query(parameters)
                == "filter%5Bowner%5D%5Blogin%5D=me&filter%5Bstatus%5D=open&page=1")
    }

    @Test(arguments: [
        (URLEncoding.ArrayEncoding.brackets, "ids%5B%5D=1&ids%5B%5D=2&ids%5B%5D=3"),
        (.noBrackets, "ids=1&ids=2&ids=3"),
        (.indexInBrackets, "ids%5B0%5D=1&ids%5B1%5D=2&ids%5B2%5D=3"),
    ])
    func arrayStyles(style: URLEncoding.ArrayEncoding, expected: String) throws {
        #expect(try query(["ids": [1, 2, 3]], URLEncoding(arrayEncoding: style)) == expected)
    }

    @Test func arraysOfDictionaries() throws {
        let parameters: Parameters = ["items": [["id": 1], ["id": 2]]]
        #expect(try query(parameters) == "items%5B%5D%5Bid%5D=1&items%5B%5D%5Bid%5D=2")
    }

    @Test(arguments: [
        (URLEncoding.BoolEncoding.numeric, "off=0&on=1"),
        (.literal, "off=false&on=true"),
    ])
    func boolStyles(style: URLEncoding.BoolEncoding, expected: String) throws {
        #expect(try query(["on": true, "off": false], URLEncoding(boolEncoding: style)) == expected)
    }

    @Test func numbersAndNulls() throws {
        let parameters: Parameters = ["int": -3, "double": 1.5, "missing": nil, "big": 1e20]
        #expect(try query(parameters) == "big=1e%2B20&double=1.5&int=-3")
    }

    @Test func emptyParametersAddNoQuestionMark() throws {
        #expect(try request([:], encoding: .queryString).url?.absoluteString == "https://api.example.com/items")
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteNumbersThrowTypedError(value: Double) {
        for encoding in [ParameterEncoding.queryString, .httpBody, .json] {
            #expect {
                try request(["x": .double(value)], encoding: encoding, method: .post)
            } throws: { error in
                guard case CourierError.parameterEncoding = error else { return false }
                return true
            }
        }
    }

    @Test(arguments: [
        (HTTPMethod.get, true), (.head, true), (.delete, true),
        (.post, false), (.put, false), (.patch, false),
    ])
    func methodDependentDestination(method: HTTPMethod, inQuery: Bool) throws {
        let request = try request(["a": 1], encoding: .url, method: method)
        if inQuery {
            #expect(request.url?.query == "a=1")
            #expect(request.httpBody == nil)
        } else {
            #expect(request.url?.query == nil)
            #expect(request.httpBody == Data("a=1".utf8))
            #expect(
                request.value(forHTTPHeaderField: "Content-Type")
                    == "application/x-www-form-urlencoded; charset=utf-8")
        }
    }

    @Test func httpBodyForcesBodyEvenForGet() throws {
        let request = try request(["a": "b c"], encoding: .httpBody, method: .get)
        #expect(request.httpBody == Data("a=b%20c".utf8))
        #expect(request.url?.query == nil)
    }

    @Test func jsonEncodingSortsKeysAndSetsContentType() throws {
        let parameters: Parameters = [
            "b": [1, 2.5, true, nil], "a": ["nested": "x/y"], "c": "\"quoted\"",
        ]
        let request = try request(parameters, encoding: .json, method: .post)
        let body = try #require(request.httpBody)
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"{"a":{"nested":"x/y"},"b":[1,2.5,true,null],"c":"\"quoted\""}"#)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test func existingContentTypeIsKept() throws {
        let json = try request(
            ["a": 1], encoding: .json, method: .post, headers: ["content-type": "application/vnd.api+json"])
        #expect(json.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
        let form = try request(["a": 1], encoding: .httpBody, method: .post, headers: ["Content-Type": "text/plain"])
        #expect(form.value(forHTTPHeaderField: "Content-Type") == "text/plain")
    }

    @Test func parameterValuesFromVariables() throws {
        let name = "Ada Lovelace"
        let count = 3
        let parameters: Parameters = ["name": "\(name)", "count": .int(count), "tags": .array(["a", "b"])]
        #expect(try query(parameters) == "count=3&name=Ada%20Lovelace&tags%5B%5D=a&tags%5B%5D=b")
    }
}
