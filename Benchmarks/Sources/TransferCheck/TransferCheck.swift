// One large transfer per process, printing its peak resident memory, so each figure is its own.
//
//   TransferCheck SCENARIO BASE_URL BYTES
//
// Scenarios: courier-upload-file, courier-upload-data, courier-multipart, courier-download, courier-download-neighbour,
// courier-stream-slow, raw-upload-file, raw-download; each courier-NAME also as ahc-NAME, the same
// on AsyncHTTPClientTransport. Prints: SCENARIO BYTES SECONDS PEAK_RSS_MIB,
// and for courier-download-neighbour also NEIGHBOUR_REQUESTS NEIGHBOUR_P50_MS
// NEIGHBOUR_P90_MS NEIGHBOUR_MAX_MS OUTCOME.
import Courier
import CourierAsyncHTTPClient
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Sink: TargetType {
    var baseURL: URL
    var path: String
    var method: HTTPMethod
    var task: HTTPTask
    var headers: [String: String] = [:]
    var validation: ValidationType { .successCodes }
}

enum Failure: Error, CustomStringConvertible {
    case usage
    case unexpected(String)
    var description: String {
        switch self {
        case .usage: "usage: TransferCheck SCENARIO BASE_URL BYTES"
        case .unexpected(let text): text
        }
    }
}

/// The peak resident set size so far, in MiB, from `getrusage` (Linux reports KiB, Darwin bytes).
/// Never a made-up number: a failure stops the check instead of reading as a small peak.
func peakResidentMiB() throws -> Double {
    var usage = rusage()
    #if canImport(Darwin)
        let who = RUSAGE_SELF
    #else
        let who = RUSAGE_SELF.rawValue
    #endif
    guard getrusage(who, &usage) == 0 else {
        throw Failure.unexpected("getrusage failed (errno \(errno)): no peak memory to report")
    }
    #if canImport(Darwin)
        return Double(usage.ru_maxrss) / 1_048_576
    #else
        return Double(usage.ru_maxrss) / 1_024
    #endif
}

/// A file of `size` zero bytes that takes no disk space (sparse).
func makeInputFile(size: Int64, in folder: URL) throws -> URL {
    let url = folder.appendingPathComponent("input-\(UUID().uuidString).bin")
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
        throw Failure.unexpected("cannot create \(url.path)")
    }
    let handle = try FileHandle(forWritingTo: url)
    try handle.truncate(atOffset: UInt64(size))
    try handle.close()
    return url
}

func fileSize(_ url: URL) -> Int64 {
    ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? NSNumber)?.int64Value ?? -1
}

@main
struct TransferCheck {
    static func main() async {
        do {
            try await run()
        } catch {
            FileHandle.standardError.write(Data("TransferCheck: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 4, let base = URL(string: arguments[2]), let size = Int64(arguments[3]) else {
            throw Failure.usage
        }
        let name = arguments[1]
        // ahc-NAME: courier-NAME on AsyncHTTPClientTransport.
        let onAHC = name.hasPrefix("ahc-")
        let scenario = onAHC ? "courier-" + name.dropFirst(4) : name
        let transport: any Transport = onAHC ? AsyncHTTPClientTransport() : URLSessionTransport()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-transfer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }

        let provider = Provider<Sink>(transport: transport)
        let started = ContinuousClock.now
        switch scenario {
        case "courier-upload-file":
            let input = try makeInputFile(size: size, in: work)
            let response = try await provider.request(
                Sink(
                    baseURL: base, path: "upload", method: .post, task: .uploadFile(input),
                    headers: ["Content-Type": "application/octet-stream"]))
            try expectReceived(response.data, size)
        case "courier-upload-data":
            // A body in memory, sent in parts (not in scripts/large-transfers: the body itself is
            // held whole, so its peak is the body's size).
            let response = try await provider.request(
                Sink(
                    baseURL: base, path: "upload", method: .post, task: .data(Data(count: Int(size))),
                    headers: ["Content-Type": "application/octet-stream"]))
            try expectReceived(response.data, size)
        case "courier-multipart":
            let input = try makeInputFile(size: size, in: work)
            let form = MultipartFormData(parts: [
                .init(name: "field", data: Data("value".utf8)),
                .init(name: "file", fileURL: input, fileName: "big.bin"),
            ])
            let response = try await provider.request(
                Sink(baseURL: base, path: "upload", method: .post, task: .uploadMultipart(form)))
            let received = try response.map(Int64.self, atKeyPath: "received")
            guard received > size else { throw Failure.unexpected("multipart body was \(received) bytes") }
        case "courier-download":
            let response = try await provider.request(
                Sink(
                    baseURL: base, path: "bytes/\(size)", method: .get,
                    task: .download(.folder(work) { _, _ in "downloaded.bin" })))
            let saved = fileSize(response.fileURL ?? work)
            guard saved == size else { throw Failure.unexpected("downloaded \(saved) of \(size) bytes") }
        case "courier-download-neighbour":
            // A download while another provider — its own URLSession — sends small requests one
            // after another: how long do they take? scripts/large-transfers runs it with the
            // download's file on a slow disk (an LD_PRELOAD shim that slows writes to files named
            // courier-download-*).
            let folder = work
            let neighbour = Task { () -> [Double] in
                let other = Provider<Sink>(transport: onAHC ? AsyncHTTPClientTransport() : URLSessionTransport())
                var latencies: [Double] = []
                // Bounded: at most 100,000 requests, whatever happens to the download.
                while !Task.isCancelled, latencies.count < 100_000 {
                    let sent = ContinuousClock.now
                    let answered =
                        (try? await other.request(Sink(baseURL: base, path: "delay/0", method: .get, task: .plain)))
                        != nil
                    // One still waiting when the download ends counts with the time it waited.
                    latencies.append(Self.milliseconds(ContinuousClock.now - sent))
                    if !answered { break }
                }
                return latencies
            }
            let outcome: String
            do {
                let response = try await provider.request(
                    Sink(
                        baseURL: base, path: "bytes/\(size)", method: .get,
                        task: .download(.folder(folder) { _, _ in "downloaded.bin" })))
                let saved = fileSize(response.fileURL ?? folder)
                guard saved == size else { throw Failure.unexpected("downloaded \(saved) of \(size) bytes") }
                outcome = "downloaded"
            } catch CourierError.limitExceeded(let limit) {
                outcome = "refused:\(limit)".replacingOccurrences(of: " ", with: "_")
            }
            neighbour.cancel()
            let latencies = await neighbour.value.sorted()
            let elapsed = milliseconds(ContinuousClock.now - started) / 1000
            print(
                name, size, String(format: "%.2f", elapsed), String(format: "%.1f", try peakResidentMiB()),
                latencies.count, String(format: "%.2f", latencies.isEmpty ? -1 : latencies[latencies.count / 2]),
                String(format: "%.2f", latencies.isEmpty ? -1 : latencies[latencies.count * 9 / 10]),
                String(format: "%.2f", latencies.last ?? -1), outcome)
            return
        case "courier-stream-slow":
            // A reader slower than the network (PAUSE_MS per MiB, default 20: at most 50 MiB/s, where
            // loopback brings ~250 MiB/s): the backlog must go to disk, not memory. Halfway,
            // another request on the same provider must complete.
            let pause = Int(ProcessInfo.processInfo.environment["PAUSE_MS"] ?? "") ?? 20
            let stream = try await provider.stream(
                Sink(baseURL: base, path: "bytes/\(size)", method: .get, task: .plain))
            var received: Int64 = 0
            var nextPause: Int64 = 1 << 20
            var checked = false
            for try await chunk in stream.chunks {
                received += Int64(chunk.count)
                if received >= nextPause {
                    nextPause += 1 << 20
                    if pause > 0 { try await Task.sleep(for: .milliseconds(pause)) }
                }
                if !checked, received >= size / 2 {
                    checked = true
                    let other = try await provider.request(
                        Sink(baseURL: base, path: "delay/1", method: .get, task: .plain))
                    guard other.statusCode == 200 else { throw Failure.unexpected("the other request failed") }
                }
            }
            guard received == size else { throw Failure.unexpected("streamed \(received) of \(size) bytes") }
        case "raw-upload-file":
            let input = try makeInputFile(size: size, in: work)
            var request = URLRequest(url: base.appendingPathComponent("upload"))
            request.httpMethod = "POST"
            let (data, _) = try await URLSession.shared.upload(for: request, fromFile: input)
            try expectReceived(data, size)
        case "raw-download":
            let (location, _) = try await URLSession.shared.download(
                for: URLRequest(url: base.appendingPathComponent("bytes/\(size)")))
            defer { try? FileManager.default.removeItem(at: location) }
            let saved = fileSize(location)
            guard saved == size else { throw Failure.unexpected("downloaded \(saved) of \(size) bytes") }
        default:
            throw Failure.usage
        }
        let seconds =
            Double((ContinuousClock.now - started).components.attoseconds) / 1e18
            + Double((ContinuousClock.now - started).components.seconds)
        print(name, size, String(format: "%.2f", seconds), String(format: "%.1f", try peakResidentMiB()))
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    static func expectReceived(_ data: Data, _ size: Int64) throws {
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let received = (json?["received"] as? NSNumber)?.int64Value ?? -1
        guard received == size else { throw Failure.unexpected("server received \(received) of \(size) bytes") }
    }
}
