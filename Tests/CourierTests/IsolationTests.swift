import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where the pipeline runs. Its internal frames are `nonisolated(nonsending)` (they run on the
/// executor of the entry point that called them, with no executor check per frame); the public
/// entry points stay `@concurrent`, so a caller on an actor (the main actor, say) never has its
/// requests built, validated or answered there. The target's getters and the stub closure are
/// called inline by the pipeline, so where they run is where the pipeline runs.
///
/// The caller is an actor on a dispatch queue of its own, so a synchronous getter can tell
/// whether it runs there (`DispatchQueue.getSpecific`); on Linux the main actor's jobs do not
/// run on the main thread, so `Thread.isMainThread` could not tell.
@Suite struct IsolationTests {
    /// Runs its jobs on one dispatch queue, marked so code can ask whether it runs there.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)  // ExecutorJob
    final class QueueExecutor: SerialExecutor {
        static let key = DispatchSpecificKey<Bool>()
        private let queue = DispatchQueue(label: "IsolationTests.caller")

        init() { queue.setSpecific(key: Self.key, value: true) }

        static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
        }
    }

    /// The caller: an actor whose jobs run on its queue, as the main actor's run on the main thread.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)  // ExecutorJob
    actor Caller {
        private let executor = QueueExecutor()
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        /// Calls `provider` through `entry`; whether it answered, and whether this ran on the queue.
        func call(_ entry: Entry, _ provider: Provider<Probe>, _ target: Probe) async throws -> (Bool, ranHere: Bool) {
            let ranHere = QueueExecutor.isCurrent
            switch entry {
            case .request:
                return (try await provider.request(target).statusCode == 200, ranHere)
            case .stream:
                var body = Data()
                for try await chunk in try await provider.stream(target).chunks { body.append(chunk) }
                return (body == Data("ok".utf8), ranHere)
            case .progress:
                var completed = false
                for try await event in provider.requestWithProgress(target) where event.response != nil {
                    completed = true
                }
                return (completed, ranHere)
            }
        }
    }

    /// The public entry points a caller can use.
    enum Entry: String, CaseIterable, Sendable {
        case request, stream, progress
    }

    /// Which stages ran on the caller's queue.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)  // ExecutorJob
    final class Threads: Sendable {
        private let seen = Locked<[String: Bool]>([:])
        func record(_ stage: String) {
            let onCaller = QueueExecutor.isCurrent
            seen.withLock { $0[stage] = ($0[stage] ?? false) || onCaller }
        }
        var all: [String: Bool] { seen.withLock { $0 } }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)  // ExecutorJob
    struct Probe: TargetType {
        let threads: Threads
        var baseURL: URL {
            threads.record("baseURL")
            return URL(string: "https://api.example.com")!
        }
        var path: String {
            threads.record("path")
            return "probe"
        }
        var method: HTTPMethod { .get }
        var task: HTTPTask {
            threads.record("task")
            return .plain
        }
        var headers: [String: String] { [:] }
        var sampleResponse: SampleResponse { .networkResponse(200, Data("ok".utf8)) }
    }

    /// How the provider is made: the default, and the settings that add stages (a shared exchange
    /// started by the provider's actor, deadlines with tasks of their own, plugins, traffic control).
    enum Setup: String, CaseIterable, Sendable {
        case plain, stubbed, deduplicated, deadlines, plugins, traffic
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)  // ExecutorJob
    static func provider(threads: Threads, setup: Setup) -> Provider<Probe> {
        let stub: Provider<Probe>.StubClosure = { _ in
            threads.record("stubClosure")
            return setup == .stubbed ? .immediate : .never
        }
        let transport = RecordingTransport()
        switch setup {
        case .plain, .stubbed: return Provider(stubClosure: stub, transport: transport)
        case .deduplicated: return Provider(stubClosure: stub, transport: transport, deduplication: .enabled)
        case .deadlines:
            return Provider(
                stubClosure: stub, transport: transport, timeout: .seconds(300), callTimeout: .seconds(300))
        case .plugins:
            let logger = NetworkLoggerPlugin(configuration: .init(output: { _ in }))
            return Provider(stubClosure: stub, transport: transport, plugins: [logger])
        case .traffic: return Provider(stubClosure: stub, transport: transport, traffic: .default)
        }
    }

    static let offTheCaller = Dictionary(
        uniqueKeysWithValues: ["baseURL", "path", "task", "stubClosure"].map { ($0, false) })

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)  // ExecutorJob
    @Test(arguments: Entry.allCases, Setup.allCases)
    func anActorCallersCallRunsOffItsActor(entry: Entry, setup: Setup) async throws {
        let threads = Threads()
        let (answered, ranHere) = try await Caller().call(
            entry, Self.provider(threads: threads, setup: setup), Probe(threads: threads))
        #expect(ranHere, "the caller runs on its queue")
        #expect(answered)
        #expect(threads.all == Self.offTheCaller)
    }

    /// A plugin isolated to the main actor, as an app's activity indicator is: its hooks touch its
    /// state without `await`. It compiles only while the `Plugin` requirements are plain async
    /// requirements (declared `nonisolated(nonsending)`, they made these hooks `nonisolated` and
    /// this class an error), and its hooks run on the main actor.
    @MainActor final class MainActorPlugin: Plugin {
        private(set) var hooks: [String] = []
        func willSend(_ request: URLRequest, context: RequestContext) async {
            MainActor.preconditionIsolated()
            hooks.append("willSend")
        }
        func didReceive(_ result: Result<Response, CourierError>, context: RequestContext) async {
            MainActor.preconditionIsolated()
            hooks.append("didReceive")
        }
    }

    @Test func aMainActorPluginRunsItsHooksOnTheMainActor() async throws {
        let plugin = MainActorPlugin()
        let provider = Provider<TestAPI>(stubClosure: Provider.immediatelyStub, plugins: [plugin])
        _ = try await provider.request(.plain)
        #expect(await plugin.hooks == ["willSend", "didReceive"])
    }
}
