import CourierTransportConformance
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Durable downloads (issue 27) against nginx's own range support for static files
/// (`scripts/test`'s TLS servers, /1m.bin): the first 600,000 bytes are kept as a failed attempt
/// would have left them, and the download asks nginx for the rest.
@Suite(
    .enabled(
        if: TLSTestServers.isAvailable && TLSTestServers.systemTrustsTestCA,
        "needs scripts/test's nginx and its test CA in the system trust store"),
    .timeLimit(.minutes(2)))
struct IntegrationNginxResumeTests {
    static let kept = 600_000

    struct Static: TargetType {
        var path: String
        var file: URL?
        var id = UUID().uuidString
        var baseURL: URL { TLSTestServers.url ?? URL(string: "https://127.0.0.1:9")! }
        var headers: [String: String] { [:] }
        var task: HTTPTask {
            guard let file else { return .plain }
            return .download(.custom(options: [.removePreviousFile]) { _, _ in file })
        }
        var validation: ValidationType { .successCodes }
        var downloadResumption: DownloadResumption { .enabled(id: id) }
    }

    /// Keeps the first ``kept`` bytes of `whole` under the target's id, as a broken-off attempt would.
    static func keepStart(of whole: Data, validator: String, for target: Static, in provider: Provider<Static>) throws {
        let part = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-resume-\(UUID().uuidString)")
        try whole.prefix(kept).write(to: part)
        let entry = try #require(
            provider.partialDownloads.adopt(
                part, offer: ResumeRules.Offer(length: Int64(kept), validator: validator, total: Int64(whole.count))))
        provider.partialDownloads.checkIn(target.id, entry)
    }

    @Test(arguments: ["ETag", "Last-Modified", "stale"])
    func nginxSendsTheRestAndTheFileIsIdentical(validator kind: String) async throws {
        let provider = Provider<Static>()
        let marker = UUID().uuidString
        let whole = try await provider.request(Static(path: "1m.bin?m=\(marker)"))
        #expect(whole.data.count == 1 << 20)
        let validator =
            kind == "stale" ? "\"stale\"" : try #require(whole.value(forHTTPHeaderField: kind))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = Static(path: "1m.bin?m=\(marker)", file: folder.appendingPathComponent("1m.bin"))
        try Self.keepStart(of: whole.data, validator: validator, for: target, in: provider)
        let response = try await provider.request(target)
        let received = response.metrics?.attempts.last?.transfer?.bytesReceived
        if kind == "stale" {
            // If-Range no longer matches: nginx answers with the whole file, which replaces the kept bytes.
            #expect(response.statusCode == 200)
            #expect(received == Int64(1 << 20))
        } else {
            #expect(response.statusCode == 206)
            #expect(received == Int64((1 << 20) - Self.kept))
        }
        let data = try Data(contentsOf: folder.appendingPathComponent("1m.bin"))
        #expect(data == whole.data)
        #expect(Checksums.crc32(Array(data)) == Checksums.crc32(Array(whole.data)))
        #expect(provider.partialDownloads.count == 0)
    }
}
