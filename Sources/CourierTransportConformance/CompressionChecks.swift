import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TransportConformance {
    // compressed uploads
    static let compressionChecks: [Check] = [
        Check("a compressed body (gzip, deflate) inflates to the body: in memory, from a file, multipart") { context in
            let folder = try ScratchFolder()
            defer { folder.remove() }
            // Sizes that take several 64 KiB blocks and little CPU: the bodies are hashed here, on
            // the caller's task, by a debug build (often under a sanitizer) beside other checks.
            let file = try folder.file(named: "body.txt", size: 300_005)
            let form = MultipartFormData(
                parts: [.init(name: "title", data: Data("Notes".utf8)), .init(name: "notes", fileURL: file)],
                memoryThreshold: 4_096)
            let text = Data(String(repeating: "{\"name\":\"Ada\",\"id\":42},", count: 5_000).utf8)
            let bodies: [(String, HTTPTask, Data)] = [
                ("in memory", .data(text), text),
                ("file", .uploadFile(file), try Data(contentsOf: file)),
                ("multipart", .uploadMultipart(form), try await form.encodedBody(maxBytes: 8 << 20)),
            ]
            let hashes = bodies.map { SHA256.hex($0.2) }
            for coding in RequestCompression.Coding.allCases {
                for ((name, task, body), hash) in zip(bodies, hashes) {
                    var target = context.fault("inflate", method: .post, task: task)
                    target.requestCompression = RequestCompression(coding)
                    let inflated = try await context.provider().request(target).map(Inflated.self)
                    #expect(inflated.encoding == coding.rawValue, "\(coding) \(name)")
                    #expect(inflated.length == body.count, "\(coding) \(name)")
                    #expect(inflated.sha256 == hash, "\(coding) \(name)")
                    #expect((inflated.received ?? .max) < body.count / 4, "\(coding) \(name): \(inflated)")
                }
            }
        },
        Check("an incompressible body is stored, a few bytes larger; a small one is sent as is") { context in
            // Random words in a tight loop: cheap even in a debug build under a sanitizer.
            var generator = SystemRandomNumberGenerator()
            var random = Data(count: 140_000)
            random.withUnsafeMutableBytes { raw in
                let words = raw.bindMemory(to: UInt64.self)
                for index in words.indices { words[index] = generator.next() }
            }
            var target = context.fault("inflate", method: .post, task: .data(random))
            target.requestCompression = .gzip
            let stored = try await context.provider().request(target).map(Inflated.self)
            #expect(stored.encoding == "gzip")
            #expect(stored.length == random.count)
            #expect(stored.sha256 == SHA256.hex(random))
            // Per 64 KiB block: 5 bytes and padding; the gzip header and trailer: 18.
            #expect((stored.received ?? .max) <= random.count + 64, "\(stored)")
            let small = Data("tiny".utf8)
            target.task = .data(small)
            let plain = try await context.provider().request(target).map(Inflated.self)
            #expect(plain.encoding == nil)
            #expect(plain.received == small.count)
            #expect(plain.sha256 == SHA256.hex(small))
        },
    ]
}

/// The fault server's account of an `/inflate` request body.
struct Inflated: Decodable, CustomStringConvertible {
    var encoding: String?
    var received: Int?
    var length: Int?
    var sha256: String?
    var error: String?

    var description: String {
        "encoding \(encoding ?? "none"), \(received ?? -1) bytes received, \(length ?? -1) inflated"
            + (error.map { ", error \($0)" } ?? "")
    }
}
