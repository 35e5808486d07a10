// Stubbed requests through Courier's whole pipeline (`Small`, the StubbedPipeline benchmark's
// target), for callgrind: `StubLoop N [decode|rawdecode|plugins|builtin|traffic|wire|auth|cache|transport]` runs N requests
// after 200 warm-up requests (`decode`: each body mapped with `Response.map`; `rawdecode`: no
// request, the sample decoded by a new `JSONDecoder` as an app would without Courier; `plugins`: with the three plugins of
// StubbedPipeline's `StubbedRequestThreePlugins`; `traffic`: with `TrafficPolicy.default`, whose limits are never reached here;
// `wire`: not stubbed, through the transport path to `MemoryTransport`, which answers at once as a
// transport does, head, body and metrics; `builtin`: `wire` with the three built-in plugins an app
// adds (an `AccessTokenPlugin`, a `NetworkActivityPlugin` and a `NetworkLoggerPlugin` with its
// default options writing to a closure that drops the line); `cache`: `wire` with an `HTTPCache`
// in memory and answers fresh for an hour, so every measured request is a fresh hit; `auth`: `wire` with each request signed by an
// `Authentication` (a bearer token, never refused: what signing adds); `transport`: `MemoryTransport.send` alone, no provider,
// so `wire` minus `transport` is what a provider adds to a transport).
// scripts/bench-breakdown runs it twice (N and 2N) and subtracts, so start-up and warm-up cancel.
// Every job runs on the main thread through `InlineExecutor` (the task prefers it): no dispatch
// worker thread is started, which valgrind 3.19 cannot follow, and hops show up as jobs.
import Courier
import Foundation
import PipelineFixtures

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Item: Decodable, Sendable {
    var id: Int
    var name: String
}

/// The plugins an app usually adds, as it would configure them; the logger's lines go nowhere.
func builtInPlugins() -> [any Plugin] {
    [
        AccessTokenPlugin { _ in "token" }, NetworkActivityPlugin(),
        NetworkLoggerPlugin(configuration: NetworkLoggerPlugin.Configuration(output: { _ in })),
    ]
}

/// `MemoryTransport`'s answer, fresh for an hour (`Cache-Control: max-age=3600`).
struct FreshForAnHour: Transport {
    let body = Data(#"{"id":1,"name":"courier"}"#.utf8)

    func send(_ transfer: Transfer) async throws -> Response {
        try transfer.checkDestination()
        let request = transfer.request
        guard let url = request.url else { throw URLError(.badURL) }
        let fields = [
            ("Content-Type", "application/json"), ("Content-Length", "25"), ("Cache-Control", "max-age=3600"),
        ]
        return Response(statusCode: 200, data: body, request: request, url: url, headerFields: fields)
    }
}

/// Signs with `Authorization: Bearer <token>`; never refreshes (the transport never refuses).
struct BearerToken: Authenticator {
    func apply(_ token: String, to request: inout URLRequest) {
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    }
    func refresh(_ token: String) async throws -> String { token }
}

/// Runs every job enqueued on it on the thread that calls `drain`, one at a time.
final class InlineExecutor: TaskExecutor, @unchecked Sendable {
    // Unchecked: only the main thread touches `jobs` (the pipeline never leaves this executor for
    // a stubbed call without de-duplication); a job from another thread would trap in `enqueue`.
    private var jobs: [UnownedJob] = []
    private let thread = pthread_self()
    private(set) var ran = 0

    func enqueue(_ job: consuming ExecutorJob) {
        precondition(pthread_equal(pthread_self(), thread) != 0, "a job from another thread")
        jobs.append(UnownedJob(job))
    }

    func drain(until done: () -> Bool) {
        while !done() {
            guard !jobs.isEmpty else { fatalError("no job to run and the loop has not ended") }
            let job = jobs.removeFirst()
            ran += 1
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

@main
enum StubLoop {
    static func main() {
        let arguments = CommandLine.arguments
        let count = arguments.count > 1 ? Int(arguments[1]) ?? 1_000 : 1_000
        let decode = arguments.count > 2 && arguments[2] == "decode"
        let traffic = arguments.count > 2 && arguments[2] == "traffic"
        let signed = arguments.count > 2 && arguments[2] == "auth"
        let builtin = arguments.count > 2 && arguments[2] == "builtin"
        let cached = arguments.count > 2 && arguments[2] == "cache"
        let wire = signed || builtin || cached || (arguments.count > 2 && arguments[2] == "wire")
        let transportAlone = arguments.count > 2 && arguments[2] == "transport"
        let decodeAlone = arguments.count > 2 && arguments[2] == "rawdecode"
        let plugins = arguments.count > 2 && arguments[2] == "plugins"
        let done = Box(false)
        let checksum = Box(0)
        let loop: @Sendable () async -> Void = {
            let transport = MemoryTransport()
            let provider = Provider<Small>(
                stubClosure: wire ? Provider.neverStub : Provider.immediatelyStub,
                transport: cached ? FreshForAnHour() : transport,
                plugins: plugins ? threePlugins() : builtin ? builtInPlugins() : [],
                traffic: traffic ? TrafficPolicy.default : nil,
                authentication: signed ? Authentication(BearerToken(), credential: "token") : nil,
                cache: cached ? HTTPCache() : nil)
            let target = Small()
            do {
                if decodeAlone {
                    // What an app does with the body without Courier: `decode` minus this is what
                    // `Response.map` adds to Foundation's decoder; `decode` minus the plain loop
                    // is what it costs in all.
                    let body = target.sampleData
                    for _ in 0..<(200 + count) {
                        checksum.value &+= try JSONDecoder().decode(Item.self, from: body).id
                        checksum.value &+= body.count
                    }
                    done.value = true
                    return
                }
                if transportAlone {
                    let url = URL(string: "https://api.example.com/v1/items/1")!
                    for _ in 0..<(200 + count) {
                        checksum.value &+= try await transport.send(URLRequest(url: url)).data.count
                    }
                    done.value = true
                    return
                }
                for _ in 0..<200 { checksum.value &+= try await provider.request(target).data.count }
                for _ in 0..<count {
                    let response = try await provider.request(target)
                    if decode {
                        checksum.value &+= try response.map(Item.self).id
                    } else {
                        checksum.value &+= response.data.count
                    }
                }
            } catch {
                print("StubLoop: \(error)")
            }
            done.value = true
        }
        // STUBLOOP_TASK=immediate: the loop on a task with no executor preference, started on the
        // main thread by `Task.immediate` (a loop that never suspends ends before it returns). It
        // counts the same as the default (RESULTS.md, "the rest"): the status-record lock in each
        // executor check is not the preference's.
        if ProcessInfo.processInfo.environment["STUBLOOP_TASK"] == "immediate" {
            guard #available(macOS 26.0, *) else { fatalError("Task.immediate needs macOS 26") }
            Task.immediate(operation: loop)
            guard done.value else { fatalError("the loop suspended: run it without STUBLOOP_TASK") }
            print("StubLoop: \(count) requests, checksum \(checksum.value), Task.immediate")
            return
        }
        let executor = InlineExecutor()
        Task(executorPreference: executor, operation: loop)
        executor.drain { done.value }
        print("StubLoop: \(count) requests, checksum \(checksum.value), jobs \(executor.ran)")
    }
}
