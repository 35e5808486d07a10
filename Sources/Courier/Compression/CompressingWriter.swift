import Foundation

/// Feeds a body that arrives in pieces of any size (file reads, multipart parts) to a
/// ``BodyCompressor`` in blocks of one size, and counts the bytes in and out: memory stays at
/// one block however large the body.
struct CompressingWriter {
    private var compressor: BodyCompressor
    private let chunkSize: Int
    private var pending: [UInt8] = []
    /// The body's bytes taken so far.
    private(set) var consumed: UInt64 = 0
    /// The compressed bytes handed to the sink so far.
    private(set) var produced: UInt64 = 0

    init(coding: RequestCompression.Coding, chunkSize: Int) {
        compressor = BodyCompressor(coding)
        self.chunkSize = max(1, chunkSize)
        pending.reserveCapacity(self.chunkSize)
    }

    /// Takes `bytes`; hands each full block's compressed bytes to `sink`.
    mutating func write(_ bytes: Data, to sink: ([UInt8]) throws -> Void) throws {
        consumed += UInt64(bytes.count)
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let room = chunkSize - pending.count
            let end = bytes.index(start, offsetBy: room, limitedBy: bytes.endIndex) ?? bytes.endIndex
            pending.append(contentsOf: bytes[start..<end])
            start = end
            if pending.count == chunkSize { try flush(to: sink) }
        }
    }

    /// Compresses what is left and ends the stream (the coding's trailer).
    mutating func finish(to sink: ([UInt8]) throws -> Void) throws {
        if !pending.isEmpty { try flush(to: sink) }
        let last = compressor.finish()
        produced += UInt64(last.count)
        try sink(last)
    }

    private mutating func flush(to sink: ([UInt8]) throws -> Void) throws {
        let compressed = compressor.compress(pending)
        pending.removeAll(keepingCapacity: true)
        produced += UInt64(compressed.count)
        try sink(compressed)
    }
}
