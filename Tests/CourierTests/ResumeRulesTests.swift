import Foundation
import Testing

@testable import Courier

/// Durable downloads (issue 27): the pure rules — what a resumed request sends and what each
/// answer does to the partial file.
@Suite struct ResumeRulesTests {
    private static func headers(_ fields: [String: String]) -> (String) -> String? {
        { name in fields.first { $0.key.lowercased() == name.lowercased() }?.value }
    }

    private var offer: ResumeRules.Offer { ResumeRules.Offer(length: 600, validator: "\"v1\"", total: 1000) }

    @Test func aResumedRequestAsksForTheRestIfTheEntityIsUnchanged() {
        let sent = ResumeRules.headers(for: offer)
        #expect(sent.map(\.0) == ["Range", "If-Range"])
        #expect(sent.map(\.1) == ["bytes=600-", "\"v1\""])
    }

    @Test(
        arguments: [
            // (headers, validator kept)
            (["ETag": "\"abc\""], "\"abc\""),
            (["ETag": "W/\"abc\""], nil),  // weak: never in If-Range
            (["ETag": "abc"], nil),  // unquoted: not an entity tag
            (["ETag": "\"a\rb\""], nil),  // not sendable as a header value
            (["ETag": "\"abc\"", "Content-Encoding": "gzip"], nil),  // ranges would count encoded bytes
            (["ETag": "\"abc\"", "Content-Encoding": "identity"], "\"abc\""),
            (["Last-Modified": "Tue, 24 Nov 2026 10:00:00 GMT"], "Tue, 24 Nov 2026 10:00:00 GMT"),
            (
                ["Last-Modified": "Tue, 24 Nov 2026 10:00:00 GMT", "Date": "Tue, 24 Nov 2026 10:00:00 GMT"],
                nil  // modified in the second it was sent: weak
            ),
            (
                ["Last-Modified": "Tue, 24 Nov 2026 10:00:00 GMT", "Date": "Tue, 24 Nov 2026 10:00:05 GMT"],
                "Tue, 24 Nov 2026 10:00:00 GMT"
            ),
            (["Last-Modified": "yesterday"], nil),
            ([:], nil),  // no validator: never resumed
        ] as [([String: String], String?)])
    func onlyAStrongValidatorAllowsResuming(fields: [String: String], expected: String?) {
        #expect(ResumeRules.validator(Self.headers(fields)) == expected)
    }

    @Test func aMatching206IsAppended() {
        let decision = ResumeRules.decide(
            status: 206, header: Self.headers(["Content-Range": "bytes 600-999/1000", "ETag": "\"v1\""]), offer: offer)
        #expect(decision == .append)
        // `*` for an unknown total, and no ETag repeated: still the rest.
        let unknownTotal = ResumeRules.decide(
            status: 206, header: Self.headers(["Content-Range": "bytes 600-999/*"]),
            offer: ResumeRules.Offer(length: 600, validator: "\"v1\""))
        #expect(unknownTotal == .append)
    }

    @Test func aWholeAnswerReplacesThePartialFile() {
        // If-Range no longer matched, or the server ignores ranges.
        #expect(ResumeRules.decide(status: 200, header: Self.headers(["ETag": "\"v2\""]), offer: offer) == .replace)
        #expect(ResumeRules.decide(status: 200, header: Self.headers([:]), offer: nil) == .replace)
    }

    @Test(
        arguments: [
            (416, ["Content-Range": "bytes */1000"]),
            (206, [:]),  // no Content-Range
            (206, ["Content-Range": "bytes 601-999/1000"]),  // starts a byte late
            (206, ["Content-Range": "bytes 0-999/1000"]),  // the whole file again
            (206, ["Content-Range": "bytes 600-1199/1200"]),  // the entity grew
            (206, ["Content-Range": "bytes x-y/z"]),
            (206, ["Content-Range": "items 600-999/1000"]),
            (206, ["Content-Range": "bytes 600-999/999"]),  // a total not past the last byte
            (206, ["Content-Range": "bytes 999-600/1000"]),  // reversed
            (206, ["Content-Range": "bytes -600-999/1000"]),
            (206, ["Content-Range": "bytes 600-99999999999999999999/*"]),  // overflow
            (206, ["Content-Range": "bytes 600-999/1000", "ETag": "\"v2\""]),  // another entity
            (206, ["Content-Range": "bytes 600-999/1000", "Content-Encoding": "gzip"]),
        ] as [(Int, [String: String])])
    func anAnswerThatCannotContinueTheFileStartsOver(status: Int, fields: [String: String]) {
        guard case .restart = ResumeRules.decide(status: status, header: Self.headers(fields), offer: offer) else {
            Issue.record("expected a restart for \(status) \(fields)")
            return
        }
    }

    @Test func a206ToARequestWithoutRangeIsTheFileOnlyWhenItIsAllOfIt() {
        let whole = ResumeRules.decide(
            status: 206, header: Self.headers(["Content-Range": "bytes 0-999/1000"]), offer: nil)
        #expect(whole == .replace)
        for fields in [
            ["Content-Range": "bytes 500-999/1000"],  // the second half, as if it were all of it
            ["Content-Range": "bytes 0-499/1000"],  // the first half
            ["Content-Range": "bytes 0-499/*"],
            [:],
        ] {
            guard case .refuse = ResumeRules.decide(status: 206, header: Self.headers(fields), offer: nil) else {
                Issue.record("a 206 nobody asked for (\(fields)) was taken as the entity")
                continue
            }
        }
    }

    @Test func aChangedLastModifiedStartsOver() {
        let offer = ResumeRules.Offer(length: 600, validator: "Tue, 24 Nov 2026 10:00:00 GMT")
        let changed = ResumeRules.decide(
            status: 206,
            header: Self.headers([
                "Content-Range": "bytes 600-999/1000", "Last-Modified": "Wed, 25 Nov 2026 10:00:00 GMT",
            ]), offer: offer)
        guard case .restart = changed else {
            Issue.record("expected a restart, got \(changed)")
            return
        }
    }

    @Test(arguments: [404, 500, 503, 304])
    func anAnswerAboutSomethingElseKeepsThePartialFile(status: Int) {
        #expect(ResumeRules.decide(status: status, header: Self.headers([:]), offer: offer) == .keep)
    }

    @Test func theWholeLengthComesFromAnUnencodedBody() {
        #expect(ResumeRules.total(ofWhole: Self.headers(["Content-Length": "1000"])) == 1000)
        #expect(ResumeRules.total(ofWhole: Self.headers(["Content-Length": "1000", "Content-Encoding": "br"])) == nil)
        #expect(ResumeRules.total(ofWhole: Self.headers(["Content-Length": "-1"])) == nil)
        // Read as the body limit and progress read it (HeaderNumber): a sign is no length.
        #expect(ResumeRules.total(ofWhole: Self.headers(["Content-Length": "+1000"])) == nil)
        #expect(ResumeRules.total(ofWhole: Self.headers(["Content-Length": "\t1000 "])) == 1000)
    }

    @Test func contentRangeParsesOnlyWellFormedValues() {
        #expect(ContentRange("bytes 0-0/1") == ContentRange("bytes 0-0/1"))
        #expect(ContentRange("bytes 5-9/10")?.length == 5)
        #expect(ContentRange("bytes 5-9/*")?.total == nil)
        #expect(ContentRange("bytes 5 -9/10") == nil)
        #expect(ContentRange("bytes 5-9/10/11") == nil)
        #expect(ContentRange("bytes +5-9/10") == nil)
        #expect(ContentRange("") == nil)
    }
}
