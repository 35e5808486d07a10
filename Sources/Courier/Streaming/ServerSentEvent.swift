import Foundation

/// One Server-Sent Event, as the WHATWG EventSource rules dispatch it.
public struct ServerSentEvent: Sendable, Hashable {
    /// The last event ID seen in the stream so far (`id:` fields persist across events), or `nil`
    /// when none was set. Sent back as `Last-Event-ID` when reconnecting.
    public var id: String?
    /// The event type: the `event:` field, `"message"` when there was none.
    public var event: String
    /// The `data:` fields of the event, joined with LF (`"\n"`).
    public var data: String
    /// The reconnection time a `retry:` field in this event set (digits only), if any.
    public var retry: Duration?

    /// Creates an event.
    public init(id: String? = nil, event: String = "message", data: String, retry: Duration? = nil) {
        self.id = id
        self.event = event
        self.data = data
        self.retry = retry
    }

    /// The event as an event stream writes it: `id`, `event` (unless `"message"`), `retry` and one
    /// `data` line per line of ``data``, then a blank line. Parsing it gives this event back
    /// (a `nil` id stays unset).
    ///
    /// `retry` is written in whole milliseconds, as the field counts them, clamped to what a stream
    /// can say and Courier reads back: a negative duration as `0`, one longer than `Int64.max`
    /// milliseconds (about 292 million years) as `Int64.max`.
    ///
    /// An event stream has no escaping: a line break ends a field, so an `id` or `event` with CR or
    /// LF, or `data` with CR, would be read back as other fields or other events. Such an event is
    /// refused, as is an `id` with a control character other than tab, which the parser ignores.
    /// - Returns: The UTF-8 bytes.
    /// - Throws: ``CourierError/invalidUse(_:)`` naming the field that cannot be written.
    public func encoded() throws(CourierError) -> Data {
        if let id, !id.utf8.allSatisfy(ServerSentEventParser.isAllowedInID) {
            throw .invalidUse("a ServerSentEvent id cannot contain CR, LF, NUL or another control character but tab")
        }
        if event.utf8.contains(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) {
            throw .invalidUse("a ServerSentEvent event type cannot contain CR or LF")
        }
        if data.utf8.contains(UInt8(ascii: "\r")) {
            throw .invalidUse("a ServerSentEvent's data cannot contain CR (an event stream reads it as a line break)")
        }
        var text = ""
        if let id { text += "id: \(id)\n" }
        if event != "message" { text += "event: \(event)\n" }
        if let retry { text += "retry: \(Self.milliseconds(retry))\n" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        text += "\n"
        return Data(text.utf8)
    }

    /// `duration` in whole milliseconds, within `0...Int64.max`: never an overflow.
    static func milliseconds(_ duration: Duration) -> Int64 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflowAgain ? .max : total
    }

    /// Decodes the event's `data` as JSON.
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - decoder: The decoder. Default: a plain `JSONDecoder`.
    /// - Returns: The value.
    /// - Throws: ``CourierError/underlying(_:_:)`` with the decoding error.
    public func decode<T: Decodable>(
        _ type: T.Type, using decoder: JSONDecoder = JSONDecoder()
    ) throws(CourierError)
        -> T
    {
        do {
            return try decoder.decode(T.self, from: Data(data.utf8))
        } catch {
            throw .underlying(error, nil)
        }
    }
}

/// Turns lines into Server-Sent Events, following the WHATWG HTML "event stream" rules exactly:
/// `data` fields joined with LF; `event`; `id` kept for later events and made the last event ID
/// when its event is dispatched, not before (an `id`
/// containing NUL is ignored, and so is one with any other control character but tab, which could
/// not be sent back as `Last-Event-ID`); `retry` only when all ASCII digits; comments (`:`); a leading BOM;
/// dispatch on a blank line, none for an event without data; an unterminated last event dropped.
///
/// A pure value fed one line at a time (``LineDecoder`` does the line endings). The data of one
/// event is bounded by `maxEventBytes` (``LimitExceeded/line(limit:)``).
struct ServerSentEventParser: Sendable {
    let maxEventBytes: Int
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType: String?
    private var retry: Duration?
    /// The last event ID buffer: what the latest `id` field said. It becomes ``lastEventID`` only
    /// when an event is dispatched (a blank line), so an `id` of an event that never ended is not
    /// sent back on reconnection: the server would resume after an event the reader never got.
    private var idBuffer: String?
    /// The ID of the latest event dispatched (blank line), or the one the parser started with:
    /// what a reconnection sends back as `Last-Event-ID`.
    private(set) var lastEventID: String?
    /// The reconnection time the stream asked for most recently.
    private(set) var reconnectionTime: Duration?
    private var atStart = true

    init(maxEventBytes: Int, lastEventID: String? = nil) {
        self.maxEventBytes = max(1, maxEventBytes)
        self.lastEventID = lastEventID
        self.idBuffer = lastEventID
    }

    /// Takes one line (without its ending); returns the event it dispatches, if any.
    mutating func consume(_ line: [UInt8]) throws(CourierError) -> ServerSentEvent? {
        var line = line[...]
        if atStart {
            atStart = false
            // A UTF-8 byte order mark at the very start of the stream is skipped.
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line = line.dropFirst(3) }
        }
        if line.isEmpty { return dispatch() }
        if line.first == UInt8(ascii: ":") { return nil }
        let field: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = line[..<colon]
            value = line[(colon + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            field = line
            value = []
        }
        switch String(decoding: field, as: UTF8.self) {
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "data":
            guard data.count + value.count + 1 <= maxEventBytes else {
                throw .limitExceeded(.line(limit: Int64(maxEventBytes)))
            }
            data.append(contentsOf: value)
            data.append(UInt8(ascii: "\n"))
            hasData = true
        case "id":
            // WHATWG ignores an id with NUL. Courier also ignores one with another control
            // character: it could not go back in a `Last-Event-ID` header (a field value has no
            // control character but tab), and keeping it would end the event source at the next
            // reconnection.
            if value.allSatisfy(Self.isAllowedInID) {
                idBuffer = String(decoding: value, as: UTF8.self)
            }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                // A number too large for 64 bits is clamped rather than refused.
                let milliseconds = Int64(String(decoding: value, as: UTF8.self)) ?? Int64.max
                retry = .milliseconds(milliseconds)
                reconnectionTime = retry
            }
        default:
            break
        }
        return nil
    }

    /// Whether an `id` may hold `byte`: tab, or anything but a control character.
    static func isAllowedInID(_ byte: UInt8) -> Bool {
        byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
    }

    /// A blank line: the event so far, if it has data; the buffers start again either way (but
    /// the ID buffer, which later events keep). The last event ID is set first, also for an event
    /// without data (WHATWG).
    private mutating func dispatch() -> ServerSentEvent? {
        lastEventID = idBuffer
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            eventType = nil
            retry = nil
        }
        guard hasData else { return nil }
        // The data buffer ends with the LF its last line added; that one is not part of the data.
        let text = String(decoding: data.dropLast(), as: UTF8.self)
        let type = eventType.flatMap { $0.isEmpty ? nil : $0 } ?? "message"
        return ServerSentEvent(id: lastEventID, event: type, data: text, retry: retry)
    }
}
