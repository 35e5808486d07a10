import Foundation

/// Splits bytes into lines as they arrive: a line ends at LF, CRLF or CR, also when the ending (or
/// a CR and its LF) is split across chunks. A pure value: no tasks, no I/O.
///
/// A line longer than `maxLineBytes` (without its ending) fails with
/// ``LimitExceeded/line(limit:)`` instead of growing without bound.
struct LineDecoder: Sendable {
    let maxLineBytes: Int
    /// The line being read, not ended yet.
    private var pending: [UInt8] = []
    /// The last byte seen was a CR: a LF at the start of the next chunk belongs to it.
    private var afterCR = false

    init(maxLineBytes: Int) {
        self.maxLineBytes = max(1, maxLineBytes)
    }

    /// The lines that `chunk` completes, in order, without their endings.
    mutating func decode(_ chunk: Data) throws(CourierError) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var offset = 0
        while let line = try nextLine(in: chunk, at: &offset) { lines.append(line) }
        return lines
    }

    /// The next line that `chunk` completes from `offset` on, without its ending; `offset` moves
    /// past it. `nil` when the rest of the chunk completes no line (it is kept as the start of
    /// the next one, and `offset` is the chunk's end). Readers take one line at a time: a chunk
    /// of many short lines (a whole body handed over at once) is never turned into all of its
    /// lines at once, which cost some fifty times the chunk's size in memory.
    mutating func nextLine(in chunk: Data, at offset: inout Int) throws(CourierError) -> [UInt8]? {
        var line: [UInt8]?
        var tooLong = false
        chunk.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = max(0, offset)
            if afterCR, index < bytes.count {
                afterCR = false
                if bytes[index] == UInt8(ascii: "\n") { index += 1 }
            }
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                    guard append(bytes, from: start, to: index) else {
                        tooLong = true
                        return
                    }
                    line = pending
                    pending = []
                    if byte == UInt8(ascii: "\r") {
                        if index + 1 < bytes.count {
                            if bytes[index + 1] == UInt8(ascii: "\n") { index += 1 }
                        } else {
                            afterCR = true
                        }
                    }
                    offset = index + 1
                    return
                }
                index += 1
            }
            guard append(bytes, from: start, to: bytes.count) else {
                tooLong = true
                return
            }
            offset = bytes.count
        }
        if tooLong { throw .limitExceeded(.line(limit: Int64(maxLineBytes))) }
        return line
    }

    /// The last line, when the bytes ended without a line ending after it.
    mutating func finish() -> [UInt8]? {
        defer { pending = [] }
        return pending.isEmpty ? nil : pending
    }

    /// Adds `bytes[from..<to]` to the pending line; `false` when that makes it too long.
    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Bool {
        guard to > from else { return true }
        guard pending.count + (to - from) <= maxLineBytes else { return false }
        pending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[from..<to]))
        return true
    }
}
