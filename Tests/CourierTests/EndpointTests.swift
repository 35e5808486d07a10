import Courier
import Foundation
import Testing

@Suite struct EndpointTests {
    private let url = URL(string: "https://api.example.com/items")!

    @Test func defaultEndpointFromEnumTarget() throws {
        let endpoint = try Endpoint(target: TestAPI.create(Item(id: 7, name: "x")))
        #expect(endpoint.url.absoluteString == "https://api.example.com/v1/items")
        #expect(endpoint.method == .post)
        #expect(endpoint.task == .json(Item(id: 7, name: "x")))
        guard case .networkResponse(200, let data) = endpoint.sampleResponseClosure() else {
            Issue.record("expected the target's sample response")
            return
        }
        #expect(data == Data("sample".utf8))
    }

    /// The default endpoint keeps its target, not a closure over it (issue 29: one malloc fewer per
    /// request); read, replaced and read again, `sampleResponseClosure` says what was set, and the
    /// copies made before a change keep their own sample.
    @Test func theSampleClosureReadsAndReplacesTheTargetsSample() throws {
        var endpoint = try Endpoint(target: TestAPI.create(Item(id: 7, name: "x")))
        let before = endpoint
        endpoint.sampleResponseClosure = { .networkResponse(418, Data("teapot".utf8)) }
        guard case .networkResponse(418, let data) = endpoint.sampleResponseClosure() else {
            Issue.record("expected the closure set")
            return
        }
        #expect(data == Data("teapot".utf8))
        guard case .networkResponse(200, let kept) = before.sampleResponseClosure() else {
            Issue.record("expected the target's sample in the copy made before")
            return
        }
        #expect(kept == Data("sample".utf8))
        #expect(endpoint == before)  // equality ignores the sample, as documented
    }

    @Test func defaultEndpointFromStructTarget() throws {
        let endpoint = try Endpoint(target: UserResource(id: 3))
        #expect(endpoint.url.absoluteString == "https://users.example.com/users/3")
        #expect(endpoint.method == .get)
        #expect(endpoint.task == .plain)
        #expect(endpoint.headers.isEmpty)
    }

    @Test func addingHeadersNewValuesWinWhateverTheCase() {
        let endpoint = Endpoint(url: url, headers: ["Content-Type": "text/plain", "X-Keep": "1"])
            .adding(headers: ["content-type": "application/json", "X-New": "2"])
        #expect(endpoint.headers == ["content-type": "application/json", "X-Keep": "1", "X-New": "2"])
    }

    @Test func replacingTask() {
        let endpoint = Endpoint(url: url, task: .plain).replacing(task: .data(Data("x".utf8)))
        #expect(endpoint.task == .data(Data("x".utf8)))
    }

    @Test func equalityIncludesBodies() {
        let a = Endpoint(url: url, method: .post, task: .data(Data("one".utf8)))
        let b = Endpoint(url: url, method: .post, task: .data(Data("two".utf8)))
        let c = Endpoint(url: url, method: .post, task: .data(Data("one".utf8)))
        #expect(a != b)
        #expect(a == c)
        #expect(Set([a, b, c]).count == 2)
    }

    @Test func jsonBodiesCompareByEncodedBytes() {
        let a = Endpoint(url: url, method: .post, task: .json(Item(id: 1, name: "a")))
        let b = Endpoint(url: url, method: .post, task: .json(Item(id: 1, name: "a")))
        let c = Endpoint(url: url, method: .post, task: .json(Item(id: 2, name: "a")))
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != c)
    }

    @Test func equalityIgnoresSampleResponseButNotHeadersOrMethod() {
        let a = Endpoint(url: url, sampleResponseClosure: { .networkResponse(200, Data()) })
        let b = Endpoint(url: url, sampleResponseClosure: { .networkResponse(500, Data("x".utf8)) })
        #expect(a == b)
        #expect(a != Endpoint(url: url, method: .delete))
        #expect(a != Endpoint(url: url, headers: ["A": "1"]))
    }

    @Test func parameterTasksCompareByValues() {
        let a = HTTPTask.parameters(["a": 1, "b": [true]], encoding: .url)
        #expect(a == .parameters(["b": [true], "a": 1], encoding: .url))
        #expect(a != .parameters(["a": 1, "b": [true]], encoding: .json))
        #expect(a != .parameters(["a": 2, "b": [true]], encoding: .url))
        #expect(
            HTTPTask.compositeData(Data("x".utf8), urlParameters: ["a": 1])
                != .compositeData(Data("y".utf8), urlParameters: ["a": 1]))
    }
}
