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
        var generator = SystemRandomNumberGenerator()
        let random = (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let text = Array(String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 3_000).utf8)
        let runs = [UInt8](repeating: 0x41, count: 100_000)
        let mixed = (0..<150_000).map { UInt8(truncatingIfNeeded: ($0 * 7) % 251 + ($0 / 1000) % 3) }
        let fewSymbols = (0..<50_000).map { _ in UInt8.random(in: 0...3, using: &generator) }
        return [[], [7], Array("a".utf8), text, runs, random, mixed, fewSymbols]
    }

    @Test(arguments: [BodyCompressor.Coding.gzip, .deflate])
    func pythonZlibInflatesWhatWeCompress(coding: BodyCompressor.Coding) async throws {
        // Seconds of compression under sanitizers and a process waited for: off the cooperative pool.
        let (status, output, notHalved) = try await offThePool { try Self.compressAndInflate(coding: coding) }
        #expect(status == 0, "python's zlib refused: \(output)")
        #expect(notHalved.isEmpty, "compressible bodies that did not shrink by half: \(notHalved)")
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
