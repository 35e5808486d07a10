/// A small streaming DEFLATE encoder (RFC 1951): LZ77 matches found with a hash chain, coded with
/// the fixed Huffman codes. Each chunk given to ``compress(_:)`` becomes one block whose matches
/// stay within the chunk, so memory is bounded by the chunk size whatever the total length.
struct DeflateEncoder {
    private var bits: UInt64 = 0
    private var bitCount = 0
    private var output: [UInt8] = []

    private static let minMatch = 3
    private static let maxMatch = 258
    private static let maxDistance = 32_768
    private static let hashBits = 15
    private static let maxChain = 64

    private static let lengthBases: [Int] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227,
        258,
    ]
    private static let lengthExtra: [Int] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ]
    private static let distanceBases: [Int] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
        6145, 8193, 12289, 16385, 24577,
    ]
    private static let distanceExtra: [Int] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]

    /// Compresses one chunk into a non-final block; returns the bytes complete so far. When the
    /// compressed block would be larger than the chunk itself (random or already compressed
    /// bytes), the chunk is stored instead: at most 5 bytes per 65,535 bytes, plus padding to a
    /// byte boundary, more than the input.
    mutating func compress(_ chunk: [UInt8]) -> [UInt8] {
        guard !chunk.isEmpty else { return takeOutput() }
        let (savedBits, savedBitCount, savedCount) = (bits, bitCount, output.count)
        writeFixedBlock(chunk)
        let fixedBits = (output.count - savedCount) * 8 + bitCount - savedBitCount
        if fixedBits > Self.storedBits(chunk.count, from: savedBitCount) {
            // Undo the compressed block: nothing of it left this encoder yet.
            output.removeSubrange(savedCount...)
            (bits, bitCount) = (savedBits, savedBitCount)
            writeStoredBlocks(chunk)
        }
        return takeOutput()
    }

    /// The bits that stored blocks for `count` bytes take, from a bit position of `bitCount`
    /// within the current byte: per block of up to 65,535 bytes, its 3 header bits, the padding
    /// to a byte boundary, LEN and NLEN, and the bytes.
    static func storedBits(_ count: Int, from bitCount: Int) -> Int {
        var position = bitCount
        var left = count
        repeat {
            let piece = min(left, Self.maxStored)
            position += 3
            position = (position + 7) / 8 * 8
            position += 32 + 8 * piece
            left -= piece
        } while left > 0
        return position - bitCount
    }

    private static let maxStored = 65_535

    /// `chunk` as stored (uncompressed, BTYPE 00) non-final blocks of up to 65,535 bytes.
    private mutating func writeStoredBlocks(_ chunk: [UInt8]) {
        var start = 0
        while start < chunk.count {
            let end = min(chunk.count, start + Self.maxStored)
            let length = end - start
            write(0, count: 1)  // BFINAL: not the last block
            write(0, count: 2)  // BTYPE 00: stored
            if bitCount > 0 { write(0, count: 8 - bitCount) }  // to a byte boundary
            write(length & 0xFFFF, count: 16)  // LEN, little-endian
            write(~length & 0xFFFF, count: 16)  // NLEN
            output.append(contentsOf: chunk[start..<end])
            start = end
        }
    }

    /// `chunk` as one non-final block with the fixed Huffman codes.
    private mutating func writeFixedBlock(_ chunk: [UInt8]) {
        write(0, count: 1)  // BFINAL: not the last block
        write(1, count: 2)  // BTYPE 01: fixed Huffman codes
        var head = [Int32](repeating: -1, count: 1 << Self.hashBits)
        var previous = [Int32](repeating: -1, count: chunk.count)
        var position = 0
        while position < chunk.count {
            var bestLength = 0
            var bestDistance = 0
            if position + Self.minMatch <= chunk.count {
                let hash = Self.hash(chunk, position)
                var candidate = Int(head[hash])
                var chain = 0
                let limit = min(Self.maxMatch, chunk.count - position)
                while candidate >= 0, position - candidate <= Self.maxDistance, chain < Self.maxChain {
                    var length = 0
                    while length < limit, chunk[candidate + length] == chunk[position + length] { length += 1 }
                    if length > bestLength {
                        bestLength = length
                        bestDistance = position - candidate
                        if length == limit { break }
                    }
                    candidate = Int(previous[candidate])
                    chain += 1
                }
                previous[position] = head[hash]
                head[hash] = Int32(position)
            }
            if bestLength >= Self.minMatch {
                writeLength(bestLength)
                writeDistance(bestDistance)
                // Index the positions the match covers, so later matches can find them.
                for covered in (position + 1)..<(position + bestLength) where covered + Self.minMatch <= chunk.count {
                    let hash = Self.hash(chunk, covered)
                    previous[covered] = head[hash]
                    head[hash] = Int32(covered)
                }
                position += bestLength
            } else {
                writeLiteral(Int(chunk[position]))
                position += 1
            }
        }
        writeLiteral(256)  // end of block
    }

    /// Ends the stream with an empty final block and pads the last byte.
    mutating func finish() -> [UInt8] {
        write(1, count: 1)  // BFINAL
        write(1, count: 2)  // fixed Huffman codes
        writeLiteral(256)
        if bitCount > 0 { write(0, count: 8 - bitCount) }
        return takeOutput()
    }

    private static func hash(_ bytes: [UInt8], _ at: Int) -> Int {
        let value = UInt32(bytes[at]) << 16 | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2])
        return Int((value &* 2_654_435_761) >> (32 - UInt32(hashBits)))
    }

    private mutating func takeOutput() -> [UInt8] {
        defer { output.removeAll(keepingCapacity: true) }
        return output
    }

    /// Appends `count` bits of `value`, least significant first.
    private mutating func write(_ value: Int, count: Int) {
        bits |= UInt64(value) << UInt64(bitCount)
        bitCount += count
        while bitCount >= 8 {
            output.append(UInt8(truncatingIfNeeded: bits))
            bits >>= 8
            bitCount -= 8
        }
    }

    /// Appends a Huffman code, most significant bit first.
    private mutating func writeCode(_ code: Int, length: Int) {
        var reversed = 0
        for bit in 0..<length { reversed |= ((code >> bit) & 1) << (length - 1 - bit) }
        write(reversed, count: length)
    }

    /// A literal/length symbol in the fixed code (RFC 1951 §3.2.6).
    private mutating func writeLiteral(_ symbol: Int) {
        switch symbol {
        case 0...143: writeCode(0x30 + symbol, length: 8)
        case 144...255: writeCode(0x190 + symbol - 144, length: 9)
        case 256...279: writeCode(symbol - 256, length: 7)
        default: writeCode(0xC0 + symbol - 280, length: 8)
        }
    }

    private mutating func writeLength(_ length: Int) {
        var index = Self.lengthBases.count - 1
        while Self.lengthBases[index] > length { index -= 1 }
        writeLiteral(257 + index)
        if Self.lengthExtra[index] > 0 { write(length - Self.lengthBases[index], count: Self.lengthExtra[index]) }
    }

    private mutating func writeDistance(_ distance: Int) {
        var index = Self.distanceBases.count - 1
        while Self.distanceBases[index] > distance { index -= 1 }
        writeCode(index, length: 5)
        if Self.distanceExtra[index] > 0 {
            write(distance - Self.distanceBases[index], count: Self.distanceExtra[index])
        }
    }
}
