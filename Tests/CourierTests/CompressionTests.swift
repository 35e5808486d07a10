import Foundation
import Testing

@testable import Courier

/// The DEFLATE encoder and its gzip/zlib framing, checked by Python's zlib (an independent
/// decoder) on many kinds of bodies.
@Suite(.timeLimit(.minutes(2))) struct CompressionTests {
    @Test func checksumsMatchKnownValues() {
        #expect(Checksums.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(Checksums.adler32(Array("Wikipedia".utf8)) == 0x11E6_0398)
        let halves = Checksums.crc32(Array("56789".utf8), continuing: Checksums.crc32(Array("1234".utf8)))
        #expect(halves == 0xCBF4_3926)
    }

    /// Bodies of many shapes: empty, one byte, text, runs, random bytes, a pattern, four symbols.
    /// Random bytes (5) and four random symbols (7) cannot shrink by half with the fixed codes.
    static func bodies() -> [[UInt8]] {
        let random = [UInt8](SeededRandom.bytes(70_000, seed: .random(in: 0...UInt64.max)))
        let text = Array(String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 3_000).utf8)
        let runs = [UInt8](repeating: 0x41, count: 100_000)
        let mixed = (0..<150_000).map { UInt8(truncatingIfNeeded: ($0 * 7) % 251 + ($0 / 1000) % 3) }
        let fewSymbols = SeededRandom.bytes(50_000, seed: .random(in: 0...UInt64.max)).map { $0 & 3 }
        return [[], [7], Array("a".utf8), text, runs, random, mixed, fewSymbols]
    }

    @Test(arguments: [BodyCompressor.Coding.gzip, .deflate])
    func pythonZlibInflatesWhatWeCompress(coding: BodyCompressor.Coding) async throws {
        // Seconds of compression under sanitizers and a process waited for: off the cooperative pool.
        let (status, output, notHalved) = try await offThePool { try Self.compressAndInflate(coding: coding) }
        #expect(status == 0, "python's zlib refused: \(output)")
        #expect(notHalved.isEmpty, "compressible bodies that did not shrink by half: \(notHalved)")
    }

    /// Random bytes cannot shrink: each block is stored instead, so the output is the input plus
    /// at most 5 bytes per 65,535 and a byte of padding per block, plus the framing (gzip 18
    /// bytes, zlib 6). Python's zlib inflates stored blocks in the test above (body 5).
    @Test(arguments: [BodyCompressor.Coding.gzip, .deflate], [1 << 16, 1_000, 100_000])
    func incompressibleBodiesGrowByAFewBytesPerBlock(coding: BodyCompressor.Coding, chunkSize: Int) async throws {
        // Three stored blocks at the largest chunk size. Made and compressed off the cooperative
        // pool: under a sanitizer this is seconds of work, which would stall other tests' requests.
        let (random, compressed) = try await offThePool {
            let random = [UInt8](SeededRandom.bytes(140_000, seed: .random(in: 0...UInt64.max)))
            return (random, BodyCompressor.compress(random, coding: coding, chunkSize: chunkSize))
        }
        let chunks = (random.count + chunkSize - 1) / chunkSize
        let storedBlocks = chunks * ((min(chunkSize, random.count) + 65_534) / 65_535)
        let framing = coding == .gzip ? 18 : 6
        // The last, empty block with the fixed codes: 10 bits, 2 bytes at most.
        #expect(compressed.count <= random.count + 6 * storedBlocks + framing + 2, "\(compressed.count)")
        // Stored blocks' lengths, as the decoder reads them: the first block's LEN after its header.
        let headerLength = coding == .gzip ? 10 : 2
        let first = min(chunkSize, 65_535, random.count)
        #expect(compressed[headerLength + 1] == UInt8(first & 0xFF))
        #expect(compressed[headerLength + 2] == UInt8(first >> 8))
    }

    @Test func storedBitsCountHeadersPaddingAndLengths() {
        // 3 header bits at bit 0, padded to 8, then LEN and NLEN (32) and the bytes.
        #expect(DeflateEncoder.storedBits(10, from: 0) == 8 + 32 + 80)
        // From bit 6: 3 bits cross the byte, padding to the next (10 bits), then the rest.
        #expect(DeflateEncoder.storedBits(10, from: 6) == 10 + 32 + 80)
        // Two blocks for 65,536 bytes.
        #expect(DeflateEncoder.storedBits(65_536, from: 0) == 8 + 32 + 65_535 * 8 + 8 + 32 + 8)
    }

    /// Compresses every body at two chunk sizes and has Python's zlib inflate each; returns its
    /// exit status, what it printed (the names of the bodies that did not match), and the
    /// compressible bodies that did not shrink by half.
    static func compressAndInflate(coding: BodyCompressor.Coding) throws -> (Int32, String, [String]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-compression-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var names: [String] = []
        var notHalved: [String] = []
        for (index, body) in Self.bodies().enumerated() {
            for chunkSize in [1 << 16, 1_000] {
                let name = "\(index)-\(chunkSize)"
                let compressed = BodyCompressor.compress(body, coding: coding, chunkSize: chunkSize)
                try Data(body).write(to: directory.appendingPathComponent("\(name).raw"))
                try Data(compressed).write(to: directory.appendingPathComponent("\(name).z"))
                names.append(name)
                if body.count > 10_000, index != 5, index != 7, compressed.count >= body.count / 2 {
                    notHalved.append(name)
                }
            }
        }
        let bits = coding == .gzip ? 31 : 15
        let script = """
            import sys, zlib, os
            d = sys.argv[1]
            bad = [n for n in sys.argv[2:] if zlib.decompress(open(os.path.join(d, n + '.z'), 'rb').read(), \(bits)) != open(os.path.join(d, n + '.raw'), 'rb').read()]
            print(' '.join(bad)); sys.exit(1 if bad else 0)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, directory.path] + names
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        process.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, output, notHalved)
    }
}
