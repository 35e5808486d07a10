import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Parameters built from variables need no wrapping (the migration pain of issue 16: 36 of 48
/// changed lines in one migrated file were `.int(page)`, `.string(q)`, `ref.map(…)`).
@Suite struct ParameterConvertibleTests {
    enum Sort: String, ParameterConvertible { case stars, updated }

    struct Search: TargetType {
        var headers: [String: String] { [:] }
        var query: String
        var page: Int
        var ref: String?
        var labels: [String]
        var sort: Sort
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "search" }
        // Written as a Moya user writes it, with variables and literals mixed.
        var task: HTTPTask {
            .parameters(
                ["q": query, "page": page, "ref": ref, "labels": labels, "sort": sort, "per_page": 30],
                encoding: .queryString)
        }
    }

    private func query(of target: some TargetType) throws -> String? {
        try Endpoint(target: target).urlRequest().url?.query
    }

    struct Ratio: TargetType {
        var headers: [String: String] { [:] }
        var encoding: ParameterEncoding
        var baseURL: URL { URL(string: "https://api.example.com")! }
        var path: String { "ratio" }
        var method: HTTPMethod { .post }
        var task: HTTPTask {
            .parameters(["r": Float(0.1), "big": Float(3.4e38), "third": Float(1) / 3], encoding: encoding)
        }
    }

    struct Body: Encodable, Sendable { var r: Float = 0.1 }

    /// Found by review: a `Float` went out with the digits of its binary value as a `Double`
    /// (`0.10000000149011612`), where `JSONEncoder` and Alamofire write `0.1`.
    @Test func floatsAreSentWithTheirOwnShortestDigits() throws {
        let form = try Endpoint(target: Ratio(encoding: .url)).urlRequest().httpBody
        #expect(form.map { String(decoding: $0, as: UTF8.self) } == "big=3.4e%2B38&r=0.1&third=0.33333334")
        let json = try Endpoint(target: Ratio(encoding: .json)).urlRequest().httpBody
        #expect(json.map { String(decoding: $0, as: UTF8.self) } == #"{"big":3.4e+38,"r":0.1,"third":0.33333334}"#)
        #expect(try ParameterValue(encoding: Body()) == ["r": 0.1])
        guard case .double(let nan) = Float.nan.parameterValue else {
            Issue.record("a Float is a double parameter")
            return
        }
        #expect(nan.isNaN)
    }

    /// Found by review: JSON encoding refused a NaN with `EncodingError`, URL encoding with
    /// `ParameterEncodingFailure.nonFiniteNumber`; both say `nonFiniteNumber` with the same key now.
    @Test(arguments: [ParameterEncoding.json, .url])
    func nonFiniteNumbersAreTheSameFailureInEveryEncoding(encoding: ParameterEncoding) throws {
        let cases: [(Parameters, String)] = [
            (["x": .double(.nan)], "x"),
            (["a": 1, "outer": ["fine": 1.5, "inner": .double(.infinity)]], "outer[inner]"),
            (["list": [1.0, .double(-.infinity)]], "list[]"),
        ]
        for (parameters, key) in cases {
            let endpoint = Endpoint(
                url: try #require(URL(string: "https://api.example.com/x")), method: .post,
                task: .parameters(parameters, encoding: encoding))
            #expect {
                try endpoint.urlRequest()
            } throws: { error in
                guard case CourierError.parameterEncoding(let failure) = error else { return false }
                return failure as? ParameterEncodingFailure == .nonFiniteNumber(key: key)
            }
        }
    }

    @Test func variablesOfEveryKindBecomeParameters() throws {
        let target = Search(query: "a b", page: 2, ref: nil, labels: ["bug", "ui"], sort: .stars)
        #expect(
            try query(of: target) == "labels%5B%5D=bug&labels%5B%5D=ui&page=2&per_page=30&q=a%20b&sort=stars")
        var withRef = target
        withRef.ref = "main"
        #expect(try query(of: withRef)?.contains("ref=main") == true)
    }

    @Test func theTaskEqualsTheOneWrittenWithCases() {
        let target = Search(query: "swift", page: 1, ref: "dev", labels: [], sort: .updated)
        let wrapped = HTTPTask.parameters(
            [
                "q": .string("swift"), "page": .int(1), "ref": .string("dev"), "labels": .array([]),
                "sort": .string("updated"), "per_page": 30,
            ], encoding: .queryString)
        #expect(target.task == wrapped)
    }

    @Test func conversions() {
        let none: Int? = nil
        let tags: Set<String> = ["b", "a"]
        let id = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        #expect(ParameterValue("x") == .string("x"))
        #expect(ParameterValue("abc".dropFirst()) == .string("bc"))
        #expect(ParameterValue(Character("c")) == .string("c"))
        #expect(ParameterValue(true) == .bool(true))
        #expect(ParameterValue(1.5) == .double(1.5))
        #expect(ParameterValue(Float(0.5)) == .double(0.5))
        #expect(ParameterValue(Int8(-3)) == .int(-3))
        #expect(ParameterValue(UInt16(7)) == .int(7))
        #expect(ParameterValue(Int64(1) << 40) == .int(1 << 40))
        #expect(ParameterValue(UInt64.max) == .string("18446744073709551615"), "no digit is lost")
        #expect(ParameterValue(none) == .null)
        #expect(ParameterValue(Optional(4)) == .int(4))
        #expect(ParameterValue(tags) == .array([.string("a"), .string("b")]), "sets are sorted")
        #expect(ParameterValue(["k": [1, 2]]) == .dictionary(["k": .array([.int(1), .int(2)])]))
        #expect(ParameterValue(id) == .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(ParameterValue(URL(string: "https://a.example/x?y=1")!) == .string("https://a.example/x?y=1"))
        #expect(ParameterValue(Sort.stars) == .string("stars"))
    }

    @Test func everyTaskThatTakesParametersTakesVariables() throws {
        let page = 3
        let file = URL(fileURLWithPath: "/tmp/upload.bin")
        let form = MultipartFormData(parts: [.init(name: "a", data: Data("b".utf8))])
        let destination = DownloadDestination.suggestedFileName(in: URL(fileURLWithPath: "/tmp"))
        let expected: Parameters = ["page": .int(3)]
        #expect(HTTPTask.parameters(["page": page], encoding: .url) == .parameters(expected, encoding: .url))
        #expect(
            HTTPTask.compositeData(Data(), urlParameters: ["page": page])
                == .compositeData(Data(), urlParameters: expected))
        #expect(
            HTTPTask.compositeParameters(
                bodyParameters: ["page": page], bodyEncoding: .json, urlParameters: ["page": page])
                == .compositeParameters(bodyParameters: expected, bodyEncoding: .json, urlParameters: expected))
        #expect(HTTPTask.uploadFile(file, urlParameters: ["page": page]) == .uploadFile(file, urlParameters: expected))
        #expect(
            HTTPTask.uploadMultipart(form, urlParameters: ["page": page])
                == .uploadMultipart(form, urlParameters: expected))
        #expect(
            HTTPTask.downloadParameters(["page": page], encoding: .url, destination: destination)
                == .downloadParameters(expected, encoding: .url, destination: destination))
        // A dictionary built elsewhere passes as it is.
        let built: [String: String] = ["q": "swift"]
        #expect(HTTPTask.parameters(built, encoding: .url) == .parameters(["q": "swift"], encoding: .url))
    }

    @Test func jsonKeepsTheTypes() throws {
        let count = 2
        let flag = false
        let request = try Endpoint(
            url: URL(string: "https://api.example.com/items")!, method: .post,
            task: .parameters(["count": count, "flag": flag, "name": "n"], encoding: .json), headers: [:]
        ).urlRequest()
        let body = try #require(request.httpBody)
        #expect(String(decoding: body, as: UTF8.self) == #"{"count":2,"flag":false,"name":"n"}"#)
    }

    struct Filter: Encodable, ParameterConvertible {
        struct Window: Encodable {
            var from: Date
            var days: Int
        }
        enum State: String, Codable, ParameterConvertible { case open, closed }
        var state: State = .open
        var labels: [String] = ["bug", "ui"]
        var assignee: String? = nil
        var window = Window(from: Date(timeIntervalSince1970: 1_790_000_000), days: 7)
        var site = URL(string: "https://example.com/a")!
        var big: UInt64 = .max
    }

    @Test func encodableValuesBecomeParametersAsTheyEncode() throws {
        let value = try ParameterValue(encoding: Filter())
        #expect(
            value
                == .dictionary([
                    "state": .string("open"), "labels": .array([.string("bug"), .string("ui")]),
                    "window": .dictionary(["from": .string("2026-09-21T14:13:20Z"), "days": .int(7)]),
                    "site": .string("https://example.com/a"), "big": .string("18446744073709551615"),
                ]), "a nil optional is left out, as Encodable leaves it out")
        #expect(Filter().parameterValue == value, "declaring the conformance is enough")
        #expect(Filter.State.closed.parameterValue == .string("closed"), "a Codable enum is its raw value")
        let page = 2
        let task = HTTPTask.parameters(["filter": Filter(), "page": page], encoding: .queryString)
        let query = try Endpoint(
            url: URL(string: "https://api.example.com/issues")!, method: .get, task: task, headers: [:]
        )
        .urlRequest().url?.query
        #expect(query?.contains("filter%5Bstate%5D=open") == true, "\(query ?? "")")
        #expect(query?.contains("filter%5Bwindow%5D%5Bdays%5D=7") == true)
        #expect(query?.contains("page=2") == true)
    }

    @Test func anEncodableThatThrowsIsReportedByTheExplicitInitializer() {
        struct Refusing: Encodable, ParameterConvertible {
            struct Nope: Error {}
            func encode(to encoder: any Encoder) throws { throw Nope() }
        }
        #expect(throws: Refusing.Nope.self) { try ParameterValue(encoding: Refusing()) }
        #expect(Refusing().parameterValue == .null)
    }

    @Test func encodingCoversNestedContainersAndSingleValues() throws {
        struct Custom: Encodable {
            enum Keys: String, CodingKey { case a, list, nested }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encodeNil(forKey: .a)
                var list = container.nestedUnkeyedContainer(forKey: .list)
                try list.encode(1)
                try list.encodeNil()
                var inner = list.nestedContainer(keyedBy: Keys.self)
                try inner.encode(true, forKey: .a)
                var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .nested)
                try nested.encode(Data([1, 2, 3]), forKey: .a)
            }
        }
        #expect(
            try ParameterValue(encoding: Custom())
                == .dictionary([
                    "a": .null, "list": .array([.int(1), .null, .dictionary(["a": .bool(true)])]),
                    "nested": .dictionary(["a": .string("AQID")]),
                ]))
        #expect(try ParameterValue(encoding: 5) == .int(5))
        #expect(try ParameterValue(encoding: [1.5]) == .array([.double(1.5)]))
        #expect(try ParameterValue(encoding: Decimal(string: "12.50")!) == .string("12.5"))
    }
}
