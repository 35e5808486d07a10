import Foundation
import Testing

@testable import Courier

/// The line decoder and the Server-Sent Events parser: tables of inputs, each also fed split at
/// every position (and at every pair of positions for short inputs), since the network may cut a
/// stream anywhere: inside a line, between a CR and its LF, inside a UTF-8 sequence.
@Suite struct StreamParsingTests {
    // MARK: Lines

    @Test(
        arguments: [
            ("a\nb\r\nc\rd", ["a", "b", "c"], "d"),
            ("\n\n", ["", ""], nil),
            ("\r\n\r\n", ["", ""], nil),
            ("\r\r", ["", ""], nil),
            ("\n\r", ["", ""], nil),
            ("one", [], "one"),
            ("", [], nil),
            ("café\nnaïve\n", ["café", "naïve"], nil),
            ("x\r", ["x"], nil),
        ] as [(String, [String], String?)])
    func linesEndAtLFCRLFAndCR(input: String, lines: [String], last: String?) throws {
        for chunks in Self.splits(of: Data(input.utf8)) {
            var decoder = LineDecoder(maxLineBytes: 1 << 10)
            var decoded: [String] = []
            for chunk in chunks {
                decoded += try decoder.decode(chunk).map { String(decoding: $0, as: UTF8.self) }
            }
            #expect(decoded == lines, "chunks \(chunks.map { String(decoding: $0, as: UTF8.self) })")
            #expect(decoder.finish().map { String(decoding: $0, as: UTF8.self) } == last)
        }
    }

    @Test func aCRAtTheEndOfAChunkSwallowsTheLFThatStartsTheNext() throws {
        var decoder = LineDecoder(maxLineBytes: 64)
        #expect(try decoder.decode(Data("a\r".utf8)) == [Array("a".utf8)])
        #expect(try decoder.decode(Data("\nb\n".utf8)) == [Array("b".utf8)])
        #expect(try decoder.decode(Data("\r".utf8)) == [[]])
        #expect(try decoder.decode(Data("c\n".utf8)) == [Array("c".utf8)])
    }

    @Test func aLineLongerThanTheLimitFails() throws {
        var decoder = LineDecoder(maxLineBytes: 8)
        #expect(try decoder.decode(Data("12345678\n".utf8)).count == 1)
        _ = try decoder.decode(Data("12345".utf8))
        #expect {
            try decoder.decode(Data("6789".utf8))
        } throws: { error in
            (error as? CourierError)?.limitExceeded == .line(limit: 8)
        }
    }

    // MARK: Server-Sent Events

    /// The WHATWG specification's examples, and every rule of its "interpret the event stream".
    static let eventCases: [(name: String, input: String, events: [ServerSentEvent])] = [
        ("data lines joined with LF", "data: YHOO\ndata: +2\ndata: 10\n\n", [.init(data: "YHOO\n+2\n10")]),
        (
            "comments, ids that persist, an empty id, one space removed",
            ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
            [
                .init(id: "1", data: "first event"), .init(id: "", data: "second event"),
                .init(id: "", data: " third event"),
            ]
        ),
        (
            "empty data still dispatches; the unterminated last event is dropped", "data\n\ndata\ndata\n\ndata:",
            [.init(data: ""), .init(data: "\n")]
        ),
        ("with and without the space", "data:test\n\ndata: test\n\n", [.init(data: "test"), .init(data: "test")]),
        ("event type", "event: add\ndata: 73857293\n\n", [.init(event: "add", data: "73857293")]),
        (
            "the type resets after each event", "event: add\ndata: 1\n\ndata: 2\n\n",
            [.init(event: "add", data: "1"), .init(data: "2")]
        ),
        (
            "an event without data is not dispatched, and its type is forgotten", "event: x\n\ndata: y\n\n",
            [.init(data: "y")]
        ),
        ("retry with digits", "retry: 1500\ndata: x\n\n", [.init(data: "x", retry: .milliseconds(1500))]),
        ("retry with anything else is ignored", "retry: 15a\nretry: \nretry:-1\ndata: x\n\n", [.init(data: "x")]),
        (
            "an id with NUL is ignored", "id: 7\ndata: a\n\nid: b\u{0}c\ndata: d\n\n",
            [.init(id: "7", data: "a"), .init(id: "7", data: "d")]
        ),
        (
            "an id with another control character than tab is ignored too",
            "id: 7\ndata: a\n\nid: b\u{1}c\ndata: d\n\nid: e\u{7F}\ndata: f\n\nid: g\u{1B}[0m\ndata: h\n\nid: i\tj\ndata: k\n\n",
            [
                .init(id: "7", data: "a"), .init(id: "7", data: "d"), .init(id: "7", data: "f"),
                .init(id: "7", data: "h"), .init(id: "i\tj", data: "k"),
            ]
        ),
        ("a leading BOM is skipped", "\u{FEFF}data: x\n\n", [.init(data: "x")]),
        ("a BOM later is part of the field name", "data: x\n\n\u{FEFF}data: y\n\n", [.init(data: "x")]),
        ("CR endings", "data: a\rdata: b\r\r", [.init(data: "a\nb")]),
        ("CRLF endings", "data: a\r\ndata: b\r\n\r\n", [.init(data: "a\nb")]),
        ("mixed endings", "data: a\r\ndata: b\rdata: c\n\r\n", [.init(data: "a\nb\nc")]),
        ("only comments", ": ping\n\n: ping\n\n", []),
        ("unknown fields are ignored", "foo: bar\ndata: x\n\n", [.init(data: "x")]),
        ("a field name alone", "data\n\n", [.init(data: "")]),
        ("colons in the value stay", "data: a: b:c\n\n", [.init(data: "a: b:c")]),
        ("the last event without its blank line is dropped", "data: a\n\ndata: b\n", [.init(data: "a")]),
        ("multi-byte characters", "data: 日本語 ✓\n\n", [.init(data: "日本語 ✓")]),
        ("an invalid UTF-8 byte becomes U+FFFD", "data: a\u{FFFD}b\n\n", [.init(data: "a\u{FFFD}b")]),
    ]

    @Test(arguments: 0..<eventCases.count)
    func eventsFollowTheWHATWGRules(index: Int) throws {
        let (name, input, expected) = Self.eventCases[index]
        for chunks in Self.splits(of: Data(input.utf8)) {
            #expect(try Self.events(chunks) == expected, "\(name)")
        }
    }

    @Test func invalidUTF8IsReplacedNotRefused() throws {
        let bytes = Data("data: a".utf8) + Data([0xFF]) + Data("b\n\n".utf8)
        #expect(try Self.events([bytes]) == [.init(data: "a\u{FFFD}b")])
    }

    @Test func eventDataLongerThanTheLimitFails() throws {
        var parser = ServerSentEventParser(maxEventBytes: 8)
        _ = try parser.consume(Array("data: 1234".utf8))
        #expect {
            try parser.consume(Array("data: 5678".utf8))
        } throws: { error in
            (error as? CourierError)?.limitExceeded == .line(limit: 8)
        }
    }

    @Test func theParserRemembersTheReconnectionTimeAndLastID() throws {
        var parser = ServerSentEventParser(maxEventBytes: 1 << 10, lastEventID: "resume-from")
        #expect(try parser.consume(Array("data: x".utf8)) == nil)
        #expect(try parser.consume([]) == ServerSentEvent(id: "resume-from", data: "x"))
        _ = try parser.consume(Array("retry: 250".utf8))
        _ = try parser.consume([])
        #expect(parser.reconnectionTime == .milliseconds(250))
        #expect(parser.lastEventID == "resume-from")
    }

    /// The ID becomes the last event ID when its event is dispatched (also one without data), and
    /// later events keep it (WHATWG's last event ID buffer).
    @Test func anIDBecomesTheLastEventIDOnlyWhenItsEventIsDispatched() throws {
        var parser = ServerSentEventParser(maxEventBytes: 1 << 10, lastEventID: "1")
        _ = try parser.consume(Array("id: 2".utf8))
        _ = try parser.consume(Array("data: x".utf8))
        #expect(parser.lastEventID == "1")
        #expect(try parser.consume([]) == ServerSentEvent(id: "2", data: "x"))
        #expect(parser.lastEventID == "2")
        _ = try parser.consume(Array("id: 3".utf8))
        #expect(try parser.consume([]) == nil)
        #expect(parser.lastEventID == "3")
        _ = try parser.consume(Array("data: y".utf8))
        #expect(try parser.consume([]) == ServerSentEvent(id: "3", data: "y"))
    }

    /// A `retry` of any length is written without trapping: in whole milliseconds, clamped to what
    /// the parser reads back.
    @Test(arguments: [
        (Duration.seconds(10_000_000_000_000_000), Int64.max),
        (.seconds(Int64.max), Int64.max),
        (.seconds(9_223_372_036_854_775), 9_223_372_036_854_775_000),
        (.milliseconds(2500), 2500),
        (.microseconds(1500), 1),
        (.zero, 0),
        (.milliseconds(-5), 0),
        (.seconds(Int64.min), 0),
    ])
    func anyRetryEncodesWithinTheRangeTheParserReads(retry: Duration, milliseconds: Int64) throws {
        let encoded = try ServerSentEvent(data: "x", retry: retry).encoded()
        #expect(String(decoding: encoded, as: UTF8.self) == "retry: \(milliseconds)\ndata: x\n\n")
        #expect(try Self.events([encoded]) == [ServerSentEvent(data: "x", retry: .milliseconds(milliseconds))])
    }

    /// An event stream has no escaping: a field that a line break would split is refused instead
    /// of written as other fields or other events (an `id` with LF injected an event before).
    @Test(arguments: [
        ServerSentEvent(id: "1\ndata: injected\n", data: "x"),
        ServerSentEvent(id: "1\rretry: 1", data: "x"),
        ServerSentEvent(id: "a\u{0}b", data: "x"),
        ServerSentEvent(id: "a\u{1B}b", data: "x"),
        ServerSentEvent(event: "update\n\ndata: injected", data: "x"),
        ServerSentEvent(event: "update\rid: 9", data: "x"),
        ServerSentEvent(data: "a\r\rdata: injected"),
        ServerSentEvent(data: "line\r\nline"),
    ])
    func anEventThatALineBreakWouldSplitIsRefused(event: ServerSentEvent) {
        #expect {
            try event.encoded()
        } throws: { error in
            guard case CourierError.invalidUse = error else { return false }
            return true
        }
    }

    /// What can be written parses back to exactly that event: tab, other control characters
    /// where the parser keeps them, NUL in the data, Unicode line separators, leading spaces.
    @Test(arguments: [
        ServerSentEvent(id: "a\tb", event: "t\u{1}y\u{0}pe", data: "a\u{0}b\u{2028}c\u{85}d"),
        ServerSentEvent(id: "  spaced", event: " spaced", data: " \n\n "),
        ServerSentEvent(id: "日本", event: "✓", data: String(repeating: "z", count: 200)),
    ])
    func whatIsWrittenParsesBackToOneEqualEvent(event: ServerSentEvent) throws {
        #expect(try Self.events([event.encoded()]) == [event])
    }

    /// A stub of events that cannot be written fails with the typed error when it is used.
    @Test func sampleEventsThatCannotBeWrittenFailWithTheTypedError() {
        guard case .networkError(let error) = SampleResponse.events([ServerSentEvent(id: "\n", data: "x")]),
            case CourierError.invalidUse = error
        else {
            Issue.record("the sample was accepted")
            return
        }
    }

    @Test func jsonDataDecodes() throws {
        struct Token: Decodable, Equatable { let text: String }
        let event = ServerSentEvent(data: #"{"text":"hi"}"#)
        #expect(try event.decode(Token.self) == Token(text: "hi"))
        #expect(throws: CourierError.self) { try ServerSentEvent(data: "[DONE]").decode(Token.self) }
    }

    // MARK: Helpers

    static func events(_ chunks: [Data]) throws -> [ServerSentEvent] {
        var lines = LineDecoder(maxLineBytes: 1 << 16)
        var parser = ServerSentEventParser(maxEventBytes: 1 << 16)
        var events: [ServerSentEvent] = []
        for chunk in chunks {
            for line in try lines.decode(chunk) {
                if let event = try parser.consume(line) { events.append(event) }
            }
        }
        // The end of the stream: a pending line and a pending event are dropped.
        return events
    }

    /// The input whole, split at every position, and for inputs up to 40 bytes at every pair.
    static func splits(of data: Data) -> [[Data]] {
        let bytes = [UInt8](data)
        var result: [[Data]] = [[data]]
        for i in 0...bytes.count {
            result.append([Data(bytes[..<i]), Data(bytes[i...])])
        }
        if bytes.count <= 40 {
            for i in 0...bytes.count {
                for j in i...bytes.count {
                    result.append([Data(bytes[..<i]), Data(bytes[i..<j]), Data(bytes[j...])])
                }
            }
        }
        // One byte at a time.
        result.append(bytes.map { Data([$0]) })
        return result
    }
}

extension CourierError {
    fileprivate var limitExceeded: LimitExceeded? {
        if case .limitExceeded(let limit) = self { return limit }
        return nil
    }
}
