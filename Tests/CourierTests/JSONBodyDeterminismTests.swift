import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct JSONBodyDeterminismTests {
    struct Wide: Encodable, Sendable {
        var zeta = 1, alpha = 2, mid = 3, beta = 4, omega = 5, gamma = 6
    }

    @Test func defaultEncoderWritesTheSameBytesEveryTime() throws {
        let endpoint = Endpoint(url: URL(string: "https://api.example.com")!, method: .post, task: .json(Wide()))
        let first = try endpoint.urlRequest().httpBody
        #expect(
            String(decoding: try #require(first), as: UTF8.self)
                == #"{"alpha":2,"beta":4,"gamma":6,"mid":3,"omega":5,"zeta":1}"#)
        for _ in 0..<50 {
            #expect(try endpoint.urlRequest().httpBody == first)
        }
    }

    @Test func equalityHoldsForUnsortedEncoders() {
        let a = HTTPTask.json(Wide(), encoder: JSONEncoder())
        let b = HTTPTask.json(Wide(), encoder: JSONEncoder())
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
    }
}
