// libFuzzer target: arbitrary bytes through the line decoder and the Server-Sent Events parser,
// whole and cut into chunks where the input says. Any input must give events or a typed error,
// never a crash, and the chunking must never change the events.
import Foundation

@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServerSentEvents(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let stream = Array(bytes.dropFirst())
    // The first byte picks a chunk length (1–256 bytes).
    let chunkLength = Int(first) + 1
    var chunks: [Data] = []
    var start = 0
    while start < stream.count {
        chunks.append(Data(stream[start..<min(stream.count, start + chunkLength)]))
        start += chunkLength
    }
    let whole = parse([Data(stream)])
    let chunked = parse(chunks)
    if whole != chunked {
        fatalError("chunking changed the events: \(String(describing: whole)) vs \(String(describing: chunked))")
    }
    return 0
}

/// The events, or the limit that stopped them; lines are also checked to never exceed the limit.
private func parse(_ chunks: [Data]) -> [ServerSentEvent]? {
    var lines = LineDecoder(maxLineBytes: 512)
    var parser = ServerSentEventParser(maxEventBytes: 1024)
    var events: [ServerSentEvent] = []
    do {
        for chunk in chunks {
            for line in try lines.decode(chunk) {
                if line.count > 512 { fatalError("a line longer than its limit") }
                if let event = try parser.consume(line) { events.append(event) }
            }
        }
    } catch {
        return nil
    }
    _ = lines.finish()
    return events
}
