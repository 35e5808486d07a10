import Courier
import Foundation

/// A plugin that records where each call's response came from (`CacheStatus`), for
/// tests that check an `HTTPCache` through code that does not hand back the `Response`.
///
/// ```swift
/// let recorder = CacheStatusRecorder()
/// let provider = Provider<API>(transport: stubs, plugins: [recorder], cache: HTTPCache())
/// _ = try await provider.request(.profile)
/// _ = try await provider.request(.profile)
/// #expect(recorder.statuses == [.network, .hit])
/// ```
///
/// A call that failed without a response is recorded as `nil`.
public final class CacheStatusRecorder: Plugin, Sendable {
    private let recorded = Locked<[CacheStatus?]>([])

    /// Creates an empty recorder.
    public init() {}

    /// Each finished call's cache status, in the order the calls finished.
    public var statuses: [CacheStatus?] { recorded.withLock { $0 } }

    /// `didFinish` alone.
    public var implementedHooks: PluginHooks { .didFinish }

    public func didFinish(
        _ result: Result<Response, CourierError>, metrics: RequestMetrics, context: RequestContext
    ) async {
        let status = result.success?.cacheStatus ?? result.failure?.response?.cacheStatus
        recorded.withLock { $0.append(status) }
    }
}

extension Result where Success == Response, Failure == CourierError {
    fileprivate var success: Response? {
        if case .success(let response) = self { return response }
        return nil
    }

    fileprivate var failure: CourierError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension TestClock {
    /// A wall clock that starts at `start` and moves only when this clock advances: give it to
    /// `HTTPCache(storage:heuristicFreshnessCap:now:)` so freshness and ages follow
    /// the test clock.
    /// - Parameter start: The date at the clock's current instant. Default: 2026-01-01 00:00:00 UTC.
    /// - Returns: The `now` closure.
    public func wallClock(startingAt start: Date = Date(timeIntervalSince1970: 1_767_225_600)) -> @Sendable () -> Date {
        let origin = now
        return { [self] in
            let (seconds, attoseconds) = origin.duration(to: self.now).components
            return start.addingTimeInterval(TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18)
        }
    }
}
