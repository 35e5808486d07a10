import Courier
import Foundation
import Testing

@Suite struct ResponseMappingTests {
    private func response(_ body: String, status: Int = 200) -> Response {
        Response(statusCode: status, data: Data(body.utf8))
    }

    // MARK: filter

    @Test func filterByRangesAndSingleCodes() throws {
        let ok = response("", status: 204)
        #expect(try ok.filter(statusCodes: 200...299).statusCode == 204)
        #expect(try ok.filter(statusCodes: 200..<205).statusCode == 204)
        #expect(try ok.filter(statusCode: 204).statusCode == 204)
        #expect(throws: CourierError.self) { try ok.filter(statusCode: 200) }
        #expect(throws: CourierError.self) { try ok.filter(statusCodes: 300...) }
    }

    @Test(arguments: [
        (199, false, false), (200, true, true), (299, true, true), (300, false, true), (399, false, true),
        (400, false, false),
    ])
    func filterSuccessfulBoundaries(code: Int, success: Bool, successOrRedirect: Bool) {
        let response = response("", status: code)
        #expect(((try? response.filterSuccessfulStatusCodes()) != nil) == success)
        #expect(((try? response.filterSuccessfulStatusAndRedirectCodes()) != nil) == successOrRedirect)
    }

    @Test func filterFailureCarriesResponse() {
        #expect {
            try response("nope", status: 404).filterSuccessfulStatusCodes()
        } throws: { error in
            guard case CourierError.statusCode(let response) = error else { return false }
            return response.statusCode == 404 && response.data == Data("nope".utf8)
        }
    }

    // MARK: mapJSON

    @Test func mapJSONObjectsArraysAndScalars() throws {
        let object = try #require(try response(#"{"a":1}"#).mapJSON() as? [String: Any])
        #expect(object["a"] as? Int == 1)
        let array = try #require(try response("[1,2]").mapJSON() as? [Any])
        #expect(array.count == 2)
        #expect(try response(#""text""#).mapJSON() as? String == "text")
    }

    @Test(arguments: ["{", "{'a':1}", "not json", "{\"a\":}"])
    func mapJSONMalformedThrows(body: String) {
        #expect {
            try response(body).mapJSON()
        } throws: { error in
            guard case CourierError.jsonMapping(_, let response) = error else { return false }
            return response.data == Data(body.utf8)
        }
    }

    @Test func mapJSONEmptyData() throws {
        #expect(throws: CourierError.self) { try response("").mapJSON() }
        #expect(try response("").mapJSON(failsOnEmptyData: false) is NSNull)
    }

    // MARK: mapString

    @Test func mapStringWholeBody() throws {
        #expect(try response("héllo").mapString() == "héllo")
        #expect(try response("").mapString() == "")
    }

    @Test func mapStringInvalidUTF8Throws() {
        let invalid = Response(statusCode: 200, data: Data([0xC3, 0x28, 0xFF]))
        #expect {
            try invalid.mapString()
        } throws: { error in
            guard case CourierError.stringMapping = error else { return false }
            return true
        }
    }

    @Test func mapStringAtKeyPath() throws {
        let body = response(#"{"data":{"user":{"name":"Ada","age":36}},"top":"t"}"#)
        #expect(try body.mapString(atKeyPath: "data.user.name") == "Ada")
        #expect(try body.mapString(atKeyPath: "top") == "t")
    }

    @Test(arguments: ["data.user.missing", "data.user.age", "data.user", "nothing", "", "data..user"])
    func mapStringAtBadKeyPathThrows(keyPath: String) {
        let body = response(#"{"data":{"user":{"name":"Ada","age":36}}}"#)
        #expect {
            try body.mapString(atKeyPath: keyPath)
        } throws: { error in
            guard case CourierError.stringMapping = error else { return false }
            return true
        }
    }

    @Test func mapStringAtKeyPathOfNonJSONThrows() {
        #expect(throws: CourierError.self) { try response("plain").mapString(atKeyPath: "a") }
    }

    // MARK: map

    @Test func mapDecodable() throws {
        #expect(try response(#"{"id":1,"name":"a"}"#).map(Item.self) == Item(id: 1, name: "a"))
        #expect(try response(#"[{"id":1,"name":"a"}]"#).map([Item].self) == [Item(id: 1, name: "a")])
    }

    @Test func mapAtNestedKeyPath() throws {
        let body = response(#"{"data":{"items":[{"id":1,"name":"a"}],"item":{"id":2,"name":"b"}}}"#)
        #expect(try body.map([Item].self, atKeyPath: "data.items") == [Item(id: 1, name: "a")])
        #expect(try body.map(Item.self, atKeyPath: "data.item") == Item(id: 2, name: "b"))
    }

    @Test func mapScalarsAtKeyPath() throws {
        let body = response(#"{"count":42,"ratio":0.5,"name":"n","flag":true,"list":[1,2]}"#)
        #expect(try body.map(Int.self, atKeyPath: "count") == 42)
        #expect(try body.map(Double.self, atKeyPath: "ratio") == 0.5)
        #expect(try body.map(String.self, atKeyPath: "name") == "n")
        #expect(try body.map(Bool.self, atKeyPath: "flag") == true)
        #expect(try body.map([Int].self, atKeyPath: "list") == [1, 2])
    }

    @Test func mapKeyPathUsesRawKeysAndTheGivenDecoder() throws {
        struct Profile: Decodable, Equatable {
            var userName: String
            var createdAt: Date
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .secondsSince1970
        let body = response(#"{"the_profile":{"user_name":"ada","created_at":10}}"#)
        let profile = try body.map(Profile.self, atKeyPath: "the_profile", using: decoder)
        #expect(profile == Profile(userName: "ada", createdAt: Date(timeIntervalSince1970: 10)))
    }

    @Test func mapMissingKeyPathThrowsJSONMapping() {
        #expect {
            try response(#"{"a":{}}"#).map(Int.self, atKeyPath: "a.b")
        } throws: { error in
            guard case CourierError.jsonMapping(let underlying, _) = error else { return false }
            return "\(underlying)".contains("a.b")
        }
    }

    @Test func mapTypeMismatchThrowsObjectMappingWithDecodingError() {
        #expect {
            try response(#"{"id":"one","name":"a"}"#).map(Item.self)
        } throws: { error in
            guard case CourierError.objectMapping(let underlying, let response) = error else { return false }
            return underlying is DecodingError && response.statusCode == 200
        }
        #expect(throws: CourierError.self) { try response(#"{"n":"x"}"#).map(Int.self, atKeyPath: "n") }
    }

    @Test func mapMalformedJSONThrowsObjectMapping() {
        #expect {
            try response("{").map(Item.self)
        } throws: { error in
            guard case CourierError.objectMapping = error else { return false }
            return true
        }
    }

    @Test func mapEmptyData() throws {
        struct Optionals: Decodable, Equatable {
            var a: Int?
            var b: String?
        }
        #expect(throws: CourierError.self) { try response("").map(Optionals.self) }
        #expect(try response("").map(Optionals.self, failsOnEmptyData: false) == Optionals())
        #expect(try response("").map([Item].self, failsOnEmptyData: false) == [])
        #expect(throws: CourierError.self) { try response("").map(Item.self, failsOnEmptyData: false) }
        // A null at a key path counts as empty.
        #expect(try response(#"{"a":null}"#).map([Int].self, atKeyPath: "a", failsOnEmptyData: false) == [])
        #expect(throws: CourierError.self) { try response(#"{"a":null}"#).map([Int].self, atKeyPath: "a") }
    }
}
