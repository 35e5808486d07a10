/// Compresses a body chunk by chunk into the `gzip` (RFC 1952) or `deflate` (zlib, RFC 1950)
/// content coding: the building block for compressed uploads. Memory is bounded by the chunk
/// size (each chunk is one DEFLATE block).
struct BodyCompressor {
    /// The content coding: `gzip`, or `deflate` (a zlib stream).
    typealias Coding = RequestCompression.Coding

    let coding: Coding
    private var encoder = DeflateEncoder()
    private var started = false
    private var crc: UInt32 = 0
    private var adler: UInt32 = 1
    private var size: UInt32 = 0

    init(_ coding: Coding) {
        self.coding = coding
    }

    /// The compressed bytes for `chunk` (with the header before the first).
    mutating func compress(_ chunk: [UInt8]) -> [UInt8] {
        var bytes = header()
        switch coding {
        case .gzip: crc = Checksums.crc32(chunk, continuing: crc)
        case .deflate: adler = Checksums.adler32(chunk, continuing: adler)
        }
        size &+= UInt32(truncatingIfNeeded: chunk.count)
        bytes += encoder.compress(chunk)
        return bytes
    }

    /// The last bytes: the end of the stream and its trailer.
    mutating func finish() -> [UInt8] {
        var bytes = header()
        bytes += encoder.finish()
        switch coding {
        case .gzip:
            // CRC-32 and the length modulo 2^32, little-endian.
            for value in [crc, size] { bytes += (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        case .deflate:
            // Adler-32, big-endian.
            bytes += (0..<4).reversed().map { UInt8(truncatingIfNeeded: adler >> (8 * $0)) }
        }
        return bytes
    }

    /// The whole of `body`, compressed in chunks of `chunkSize` bytes.
    static func compress(_ body: [UInt8], coding: Coding, chunkSize: Int = 1 << 16) -> [UInt8] {
        var compressor = BodyCompressor(coding)
        var output: [UInt8] = []
        var start = 0
        while start < body.count {
            let end = min(body.count, start + max(1, chunkSize))
            output += compressor.compress(Array(body[start..<end]))
            start = end
        }
        return output + compressor.finish()
    }

    private mutating func header() -> [UInt8] {
        guard !started else { return [] }
        started = true
        switch coding {
        // Magic, CM 8 (deflate), no flags, no time, no extra flags, OS unknown.
        case .gzip: return [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        // CM 8 with a 32 KiB window; FLEVEL 0 and a check value that makes the pair divisible by 31.
        case .deflate: return [0x78, 0x01]
        }
    }
}
