import CCourierZlib
import Courier
import Foundation

/// `data` compressed with zlib: `windowBits` 31 is gzip, 15 zlib-wrapped deflate, -15 raw deflate.
/// With `flushingEvery`, the encoder flushes (`Z_SYNC_FLUSH`) after every that many bytes, as a
/// server or proxy that compresses while it writes does; without `finish`, the stream is left open
/// after its last flush.
func compress(_ data: Data, windowBits: Int32, flushingEvery write: Int? = nil, finish: Bool = true) throws -> Data {
    var stream = z_stream()
    guard courier_deflate_init(&stream, windowBits) == Z_OK else { throw URLError(.unknown) }
    defer { deflateEnd(&stream) }
    let write = max(1, write ?? data.count)
    var output = [UInt8](repeating: 0, count: 64 << 10)
    var result = Data()
    var offset = 0
    repeat {
        let end = min(offset + write, data.count)
        var input = [UInt8](data[(data.startIndex + offset)..<(data.startIndex + end)])
        let flush = end == data.count && finish ? Z_FINISH : Z_SYNC_FLUSH
        input.withUnsafeMutableBytes { source in
            stream.next_in = source.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_in = uInt(source.count)
            // zlib fills the output as far as it can; a full buffer means there is more to take.
            repeat {
                let produced = output.withUnsafeMutableBytes { target in
                    stream.next_out = target.baseAddress?.assumingMemoryBound(to: Bytef.self)
                    stream.avail_out = uInt(target.count)
                    _ = deflate(&stream, flush)
                    return target.count - Int(stream.avail_out)
                }
                result.append(contentsOf: output[0..<produced])
            } while stream.avail_out == 0
        }
        offset = end
    } while offset < data.count
    return result
}

/// `count` bytes that do not compress (a fixed linear congruential sequence, the same every run).
func incompressible(_ count: Int) -> Data {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    return Data(
        (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        })
}

/// For `#expect(performing:throws:)`: whether the error is `CourierError.limitExceeded(limit)`.
func exceeded(_ limit: LimitExceeded) -> @Sendable (any Error) -> Bool {
    { error in
        guard case .limitExceeded(let crossed) = error as? CourierError else { return false }
        return crossed == limit
    }
}
