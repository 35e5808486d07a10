import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How to use and renew a credential, for ``Authentication``.
///
/// ```swift
/// struct OAuth: Authenticator {
///     let client: AuthClient
///     func apply(_ token: Token, to request: inout URLRequest) {
///         request.setValue("Bearer \(token.access)", forHTTPHeaderField: "Authorization")
///     }
///     func refresh(_ token: Token) async throws -> Token {
///         try await client.refresh(token.refresh)
///     }
/// }
/// ```
public protocol Authenticator: Sendable {
    /// What the requests are signed with (a token, a key pair…).
    associatedtype Credential: Sendable

    /// Signs a request with the credential (usually: sets `Authorization`).
    ///
    /// Called once for each attempt, outside the ``Authentication`` actor: from many requests at
    /// once, each in its own task on the shared concurrent executor (a provider's entry points
    /// leave the caller's actor, the main actor included). Keep it quick and free of shared
    /// mutable state (an authenticator that counts or caches in a class of its own must make that
    /// safe for concurrent calls); slow work (fetching, key derivation) belongs in
    /// ``refresh(_:)`` or in the credential itself.
    /// - Parameters:
    ///   - credential: The current credential.
    ///   - request: The request to sign.
    func apply(_ credential: Credential, to request: inout URLRequest)

    /// Gets a new credential to replace `credential`, which the server refused.
    /// - Parameter credential: The refused credential.
    /// - Returns: The new credential.
    /// - Throws: Any error; waiting requests fail with ``CourierError/authentication(_:)``.
    func refresh(_ credential: Credential) async throws -> Credential

    /// Whether a response means the credential was refused. Default: status 401.
    /// - Parameter response: A response to a signed request.
    /// - Returns: `true` to refresh and retry.
    func requiresRefresh(_ response: Response) -> Bool
}

extension Authenticator {
    public func requiresRefresh(_ response: Response) -> Bool { response.statusCode == 401 }
}

/// Why authentication failed. Wrapped in ``CourierError/authentication(_:)``.
public enum AuthenticationFailure: Error, Sendable, CustomStringConvertible {
    /// ``Authenticator/refresh(_:)`` threw this.
    case refreshFailed(any Error)
    /// More than `refreshes` refreshes were needed within `window`: the server keeps refusing new
    /// credentials, so Courier stops instead of looping.
    case refreshLimitReached(refreshes: Int, window: Duration)

    /// The error the refresh threw, if that is what happened.
    public var cause: (any Error)? {
        if case .refreshFailed(let error) = self { return error }
        return nil
    }

    public var description: String {
        switch self {
        case .refreshFailed(let error): "the credential could not be refreshed: \(error)"
        case .refreshLimitReached(let refreshes, let window):
            "more than \(refreshes) credential refreshes within \(window)"
        }
    }
}

/// A request signed with a given version of the credential.
struct SignedRequest: Sendable {
    /// The signed request.
    let request: URLRequest
    /// Which credential signed it: bumped by each refresh.
    let generation: Int
    /// The header fields signing set or changed: credentials, kept from other origins like
    /// ``Limits/credentialHeaders`` (an authenticator may put its token in a header of its own).
    var credentialFields: Set<String> = []

    /// The fields of `signed` that `request` did not have with the same value.
    static func changedFields(from request: URLRequest, to signed: URLRequest) -> Set<String> {
        let before = request.allHTTPHeaderFields ?? [:]
        var changed: Set<String> = []
        for (name, value) in signed.allHTTPHeaderFields ?? [:] where before[name] != value { changed.insert(name) }
        return changed
    }
}

/// What a provider needs from an authentication; ``Authentication`` is the one implementation.
protocol RequestAuthentication: Sendable {
    /// Signs `request` with the current credential, first waiting for a refresh in progress;
    /// `nil` for a request sent from inside this authentication's own refresh (sent unsigned).
    nonisolated(nonsending) func sign(_ request: URLRequest) async throws(CourierError) -> SignedRequest?
    /// Whether `response` means the credential was refused.
    func requiresRefresh(_ response: Response) -> Bool
    /// Makes sure the credential is newer than the one that signed `request`: refreshes it, or
    /// waits for the refresh already running, or returns at once if that already happened.
    func refresh(after request: SignedRequest) async throws(CourierError)
}

/// A credential shared by every request of one or more providers, refreshed once however many
/// requests find it refused.
///
/// ```swift
/// let auth = Authentication(OAuth(client: client), credential: savedToken)
/// let provider = Provider<API>(authentication: auth)
/// ```
///
/// Each request is signed just before it is sent. When a response says the credential was refused
/// (401 by default), the credential is refreshed and the request is sent once more with the new
/// one. The state lives in this actor, so N requests failing at once cause exactly one refresh:
/// the first starts it, the others wait for it, requests that start meanwhile wait for it instead
/// of going out with the old credential, and a request signed with an older credential than the
/// current one is simply re-signed. A failed refresh fails every waiting request with
/// ``CourierError/authentication(_:)``; so does needing more than ``maxRefreshes`` refreshes within
/// ``refreshWindow`` (a server that refuses every credential would otherwise loop forever).
///
/// A refresh may ask for the new credential through a provider that uses this same
/// authentication (the usual token endpoint of the API): requests sent from inside
/// ``Authenticator/refresh(_:)`` are sent unsigned and never start a refresh themselves, so they
/// neither wait for the refresh they belong to nor for one another. A task the refresh starts
/// that outlives it is signed as usual once the refresh is over.
public actor Authentication<A: Authenticator>: RequestAuthentication {
    private let authenticator: A
    private let clock: any Clock<Duration>
    /// At most this many refreshes within ``refreshWindow``. Default: 5.
    public nonisolated let maxRefreshes: Int
    /// Default: 30 seconds.
    public nonisolated let refreshWindow: Duration

    /// The credential requests are signed with now.
    public private(set) var credential: A.Credential
    private var generation = 0
    private var refreshing: Task<A.Credential, any Error>?
    /// The serial of `refreshing` (see `liveRefreshes`): a refresh that ends clears `refreshing`
    /// only when it is still its own. One its waiters abandoned (cancelled when the last of them
    /// left) may end while a newer one runs, and must not make requests stop waiting for that one.
    private var refreshingSerial: UInt64?
    /// Requests waiting for `refreshing`. When the last one leaves (cancelled), the refresh is
    /// cancelled too.
    private var refreshWaiters = 0
    /// When each refresh of the window started, by serial. A refresh abandoned by every waiter
    /// (cancelled before it gave a credential) leaves the window: callers that cancel while a
    /// slow token endpoint answers must not use up the limit, which is for a server that refuses
    /// every fresh credential.
    private var refreshTimes: [(serial: UInt64, at: Duration)] = []
    /// Refreshes whose work is still running, by serial: only a request sent from inside one of
    /// them goes unsigned, not one from a task it spawned that outlives it (task-locals follow
    /// unstructured tasks).
    private var liveRefreshes: Set<UInt64> = []
    private var refreshSerial: UInt64 = 0
    private let start: any InstantProtocol<Duration>

    /// Creates an authentication.
    /// - Parameters:
    ///   - authenticator: How to apply and refresh the credential.
    ///   - credential: The credential to start with.
    ///   - maxRefreshes: At most this many refreshes within `refreshWindow`; past it a refusal is
    ///     ``AuthenticationFailure/refreshLimitReached(refreshes:window:)``. `0`: never refresh.
    ///     Default: 5.
    ///   - refreshWindow: Default: 30 seconds. Zero or less counts nothing: refreshes are then
    ///     unlimited, and a server that refuses every credential costs one refresh per call.
    ///   - clock: The clock the window is measured on. Default: `ContinuousClock()`.
    public init(
        _ authenticator: A, credential: A.Credential, maxRefreshes: Int = 5,
        refreshWindow: Duration = .seconds(30), clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.authenticator = authenticator
        self.credential = credential
        self.maxRefreshes = maxRefreshes
        self.refreshWindow = refreshWindow
        self.clock = clock
        self.start = clock.now
    }

    /// How many times the credential was refreshed.
    public var refreshCount: Int { generation }

    /// Whether a refresh is running now.
    public var isRefreshing: Bool { refreshing != nil }

    /// How many requests are waiting for the running refresh.
    /// Test-only, kept: the count is the actor's private state; a test double would replace the type under test.
    var refreshWaiterCount: Int { refreshWaiters }

    /// How many refreshes' work is still running, the abandoned included (tests).
    var runningRefreshCount: Int { liveRefreshes.count }

    /// Signs off the actor: it only hands out the credential and its generation (state), and the
    /// authenticator's `apply` (a `URLRequest` edit, thousands of instructions in Foundation) and
    /// the comparison of the two requests run in the caller's isolation, so concurrent requests do
    /// not queue on this actor to be signed one after another (issue 29).
    nonisolated(nonsending) func sign(_ request: URLRequest) async throws(CourierError) -> SignedRequest? {
        guard let current = try await credentialForSigning() else { return nil }
        var signed = request
        authenticator.apply(current.credential, to: &signed)
        return SignedRequest(
            request: signed, generation: current.generation,
            credentialFields: SignedRequest.changedFields(from: request, to: signed))
    }

    /// The credential to sign with now and its generation, after the refresh in progress if there
    /// is one; `nil` for a request sent from inside this authentication's own refresh.
    private func credentialForSigning() async throws(CourierError) -> (credential: A.Credential, generation: Int)? {
        // Sent by this authentication's own refresh: waiting for that refresh would wait forever.
        let me = ObjectIdentifier(self)
        if RefreshScope.running.contains(where: { $0.authentication == me && liveRefreshes.contains($0.serial) }) {
            return nil
        }
        if let refreshing {
            // Do not go out with a credential that is being replaced.
            try await wait(for: refreshing)
        }
        return (credential, generation)
    }

    nonisolated func requiresRefresh(_ response: Response) -> Bool {
        authenticator.requiresRefresh(response)
    }

    func refresh(after request: SignedRequest) async throws(CourierError) {
        // Already refreshed since this request was signed: just sign it again.
        if request.generation < generation { return }
        if let refreshing {
            try await wait(for: refreshing)
            return
        }
        let now = elapsed()
        refreshTimes.removeAll { now - $0.at >= refreshWindow }
        guard refreshTimes.count < maxRefreshes else {
            throw .authentication(.refreshLimitReached(refreshes: maxRefreshes, window: refreshWindow))
        }
        let stale = credential
        let generationBefore = generation
        refreshSerial += 1
        refreshTimes.append((refreshSerial, now))
        let scope = RefreshScope.Key(authentication: ObjectIdentifier(self), serial: refreshSerial)
        liveRefreshes.insert(scope.serial)
        // The task installs the new credential itself, on this actor, before anyone waiting for it
        // resumes: a request waiting in `sign` must never see the old credential afterwards.
        let task = Task { [authenticator] () async throws -> A.Credential in
            do {
                let fresh = try await RefreshScope.$running.withValue(
                    RefreshScope.running.union([scope])
                ) { try await authenticator.refresh(stale) }
                // Installed even when every waiter left (the refresh was cancelled) but it gave
                // a credential all the same: the server issued it, and with a refresh token
                // that rotates, the next refresh from the stale one would be refused (found by
                // review). `install` keeps a newer credential in place.
                self.install(fresh, replacing: generationBefore, scope: scope)
                return fresh
            } catch {
                self.end(scope)
                // A refresh abandoned before this one installed a credential meanwhile (both
                // started from the same stale one; with a rotating refresh token, this one is
                // refused for it): its waiters go on with that credential instead of failing
                // (found by review).
                if self.generation != generationBefore, !(error is CancellationError) { return self.credential }
                throw error
            }
        }
        refreshing = task
        refreshingSerial = scope.serial
        try await wait(for: task)
    }

    private func install(_ fresh: A.Credential, replacing generationBefore: Int, scope: RefreshScope.Key) {
        end(scope)
        guard generation == generationBefore else { return }
        credential = fresh
        generation += 1
    }

    /// A refresh's work is over: requests it sends are signed again, and it is no longer the one
    /// requests wait for, if it still was.
    private func end(_ scope: RefreshScope.Key) {
        liveRefreshes.remove(scope.serial)
        if refreshingSerial == scope.serial {
            refreshing = nil
            refreshingSerial = nil
        }
    }

    private func elapsed() -> Duration {
        func since<I: InstantProtocol<Duration>>(_ start: I) -> Duration {
            // The clock's `now` has the same instant type as `start`.
            (clock.now as? I).map { start.duration(to: $0) } ?? .zero
        }
        return since(start)
    }

    /// Waits for a refresh, answering a cancelled caller at once with ``CourierError/cancelled``
    /// (the refresh goes on for the others). When the last waiter leaves that way, the refresh is
    /// cancelled and the next request starts a new one; a credential the cancelled refresh still
    /// returns is installed (unless a newer one is).
    private func wait(for task: Task<A.Credential, any Error>) async throws(CourierError) {
        refreshWaiters += 1
        let outcome = await Self.value(of: task)
        refreshWaiters -= 1
        switch outcome {
        case .success:
            return
        case .failure(.cancelled) where Task.isCancelled:
            if refreshWaiters == 0, refreshing == task {
                task.cancel()
                // Abandoned: it does not count against the limit (see `refreshTimes`).
                if let serial = refreshingSerial { refreshTimes.removeAll { $0.serial == serial } }
                refreshing = nil
                refreshingSerial = nil
            }
            throw .cancelled
        case .failure(let error):
            throw error
        }
    }

    /// The refresh's outcome, or ``CourierError/cancelled`` as soon as the calling task is cancelled.
    private nonisolated static func value(
        of task: Task<A.Credential, any Error>
    ) async -> Result<Void, CourierError> {
        await FirstResult.value(
            of: {
                do {
                    _ = try await task.value
                    return .success(())
                } catch let error as CourierError {
                    return .failure(.authentication(.refreshFailed(error)))
                } catch is CancellationError {
                    return .failure(.cancelled)
                } catch {
                    return .failure(.authentication(.refreshFailed(error)))
                }
            }, orOnCancel: .failure(.cancelled))
    }
}

/// The refreshes the current task is running (a task-local value: it follows the refresh into
/// the requests it sends, and into tasks it spawns, which is why each refresh is named by a serial
/// that counts only while it runs).
enum RefreshScope {
    struct Key: Hashable, Sendable {
        let authentication: ObjectIdentifier
        let serial: UInt64
    }

    @TaskLocal static var running: Set<Key> = []
}
