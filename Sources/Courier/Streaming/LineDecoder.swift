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
        var failure: CourierError?
        chunk.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            var index = 0
            if afterCR, !bytes.isEmpty {
                afterCR = false
                if bytes[0] == UInt8(ascii: "\n") {
                    start = 1
                    index = 1
                }
            }
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                    if !append(bytes, from: start, to: index) {
                        failure = .limitExceeded(.line(limit: Int64(maxLineBytes)))
                        return
                    }
                    lines.append(pending)
                    pending.removeAll(keepingCapacity: true)
                    if byte == UInt8(ascii: "\r") {
                        if index + 1 < bytes.count {
                            if bytes[index + 1] == UInt8(ascii: "\n") { index += 1 }
                        } else {
                            afterCR = true
                        }
                    }
                    start = index + 1
                }
                index += 1
            }
            if !append(bytes, from: start, to: bytes.count) {
                failure = .limitExceeded(.line(limit: Int64(maxLineBytes)))
            }
        }
        if let failure { throw failure }
        return lines
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
