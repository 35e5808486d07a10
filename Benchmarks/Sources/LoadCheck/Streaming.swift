// Streaming throughput: Courier's `Provider.stream` next to a raw URLSession data task whose
// delegate counts the bytes (what streaming on Linux takes without Courier; the session has the
// same configuration as Courier's and the default delegate queue, as such code is usually
// written), each client alone in its block, the order rotating every round, plus raw against raw
// (the harness's noise). And the time from a reader leaving a stream to the server seeing its
// connection closed.
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct BigFile: TargetType {
    var headers: [String: String] { [:] }
    var baseURL: URL
    var path: String { "stream.bin" }
    var validation: ValidationType { .successCodes }
}

/// Counts a data task's bytes in the delegate and reports the end.
final class CountingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the URLSessionDelegate boundary; `state` is only touched under `lock`.
    private let lock = NSLock()
    private var state: (bytes: Int64, done: CheckedContinuation<Int64, any Error>?) = (0, nil)

    func start(_ continuation: CheckedContinuation<Int64, any Error>) {
        lock.lock()
        state = (0, continuation)
        lock.unlock()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        state.bytes += Int64(data.count)
        lock.unlock()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock()
        let (bytes, continuation) = state
        state.done = nil
        lock.unlock()
        if let error { continuation?.resume(throwing: error) } else { continuation?.resume(returning: bytes) }
    }
}

enum Streaming {
    /// `rounds` rounds; each round runs a block of `transfers` streams per client, alone.
    static func throughput(base: URL, bytes: Int64, rounds: Int, transfers: Int) async throws {
        let delegate = CountingDelegate()
        let raw = URLSession(
            configuration: URLSessionTransport.defaultConfiguration(), delegate: delegate, delegateQueue: nil)
        let provider = Provider<BigFile>()
        let url = base.appendingPathComponent("stream.bin")

        func rawBlock() async throws -> Double {
            try await measure {
                for _ in 0..<transfers {
                    let received = try await withCheckedThrowingContinuation { continuation in
                        delegate.start(continuation)
                        raw.dataTask(with: url).resume()
                    }
                    guard received == bytes else { throw LoadCheckFailure("raw streamed \(received) of \(bytes)") }
                }
            }
        }
        func courierBlock() async throws -> Double {
            try await measure {
                for _ in 0..<transfers {
                    let stream = try await provider.stream(BigFile(baseURL: base))
                    var received: Int64 = 0
                    for try await chunk in stream.chunks { received += Int64(chunk.count) }
                    guard received == bytes else { throw LoadCheckFailure("Courier streamed \(received) of \(bytes)") }
                }
            }
        }
        _ = try await rawBlock()
        _ = try await courierBlock()
        var ratios: [Double] = []
        var control: [Double] = []
        var rawRates: [Double] = []
        var courierRates: [Double] = []
        let mebibytes = Double(bytes) * Double(transfers) / Double(1 << 20)
        for round in 0..<rounds {
            // raw, Courier, raw again (the A/A control), in an order that rotates every round.
            var times: [String: [Double]] = [:]
            let order = [["raw", "courier", "raw"], ["courier", "raw", "raw"], ["raw", "raw", "courier"]][round % 3]
            for client in order {
                times[client, default: []].append(client == "raw" ? try await rawBlock() : try await courierBlock())
            }
            let rawTimes = times["raw"] ?? []
            let courierTime = times["courier"]?.first ?? .infinity
            rawRates.append(mebibytes / rawTimes[0])
            courierRates.append(mebibytes / courierTime)
            ratios.append(rawTimes[0] / courierTime)
            control.append(rawTimes[0] / rawTimes[1])
        }
        raw.finishTasksAndInvalidate()
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        line("stream-throughput", median(courierRates), median(rawRates), "MiB/s")
        line("stream-ratio-median", median(ratios), nil, "ratio", format: "%.3f")
        line("stream-ratio-min", ratios.min() ?? 0, nil, "ratio", format: "%.3f")
        line("stream-ratio-max", ratios.max() ?? 0, nil, "ratio", format: "%.3f")
        line("stream-raw-vs-raw", median(control), nil, "ratio", format: "%.3f")
        line("stream-raw-vs-raw-min", control.min() ?? 0, nil, "ratio", format: "%.3f")
        line("stream-raw-vs-raw-max", control.max() ?? 0, nil, "ratio", format: "%.3f")
    }

    struct Watch: TargetType {
        var headers: [String: String] { [:] }
        var baseURL: URL
        var path: String
        var task: HTTPTask
    }

    struct Closed: Decodable {
        var closed: Bool
        var at: Double?
    }

    /// `count` times: read two chunks of a stream that never ends, leave the loop, and ask the
    /// server when it saw the connection close.
    static func closeLatency(fault: URL, count: Int, transport: any Transport, label: String) async throws {
        let provider = Provider<Watch>(transport: transport)
        var latencies: [Double] = []
        for _ in 0..<count {
            let id = UUID().uuidString
            let stream = try await provider.stream(
                Watch(
                    baseURL: fault, path: "stream-watch", task: .parameters(["id": .string(id)], encoding: .queryString)
                ))
            var seen = 0
            var left = 0.0
            for try await _ in stream.chunks {
                seen += 1
                if seen == 2 {
                    left = Date().timeIntervalSince1970
                    break
                }
            }
            var closed = Closed(closed: false)
            // Each question waits up to 10 s for the close (the server answers as soon as it sees it).
            for _ in 0..<6 where !closed.closed {
                closed = try await provider.request(
                    Watch(
                        baseURL: fault, path: "stream-closed",
                        task: .parameters(["id": .string(id), "wait": 10], encoding: .queryString))
                ).map(Closed.self)
            }
            guard closed.closed, let at = closed.at else { throw LoadCheckFailure("the server never saw the close") }
            latencies.append(max(0, at - left) * 1_000)
        }
        latencies.sort()
        line("\(label)-p50", latencies[latencies.count / 2], nil, "ms", format: "%.1f")
        line(
            "\(label)-p99", latencies[min(latencies.count - 1, latencies.count * 99 / 100)], nil, "ms",
            format: "%.1f")
    }
}
