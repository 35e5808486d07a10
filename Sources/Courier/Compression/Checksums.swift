/// CRC-32 (IEEE 802.3, as gzip uses it) and Adler-32 (as zlib uses it), computed incrementally.
enum Checksums {
    /// The CRC-32 lookup table for the reflected polynomial 0xEDB88320.
    static let crcTable: [UInt32] = (0..<256).map { index -> UInt32 in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// The CRC-32 of `bytes`, continuing from `crc` (start with 0).
    static func crc32(_ bytes: some Sequence<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
        var value = ~crc
        for byte in bytes { value = crcTable[Int((value ^ UInt32(byte)) & 0xFF)] ^ (value >> 8) }
        return ~value
    }

    /// The Adler-32 of `bytes`, continuing from `adler` (start with 1).
    static func adler32(_ bytes: some Sequence<UInt8>, continuing adler: UInt32 = 1) -> UInt32 {
        var a = adler & 0xFFFF
        var b = adler >> 16
        var pending = 0
        for byte in bytes {
            a += UInt32(byte)
            b += a
            pending += 1
            // 5552 is the most bytes before `b` could overflow 32 bits.
            if pending == 5552 {
                a %= 65521
                b %= 65521
                pending = 0
            }
        }
        return (b % 65521) << 16 | (a % 65521)
    }
}
