import Foundation
import Testing

@testable import Courier

/// The traffic queue's state machine, without tasks or clocks.
@Suite struct TrafficQueueTests {
    private func waiter(
        _ id: UInt64, _ priority: TrafficClass.Priority = .normal, host: String = "a", weight: Int = 1,
        at time: Duration = .zero
    ) -> TrafficQueue.Waiter {
        .init(id: id, host: host, weight: weight, priority: priority, enqueued: time)
    }

    @Test func grantsUpToTheTotalThenQueues() {
        var queue = TrafficQueue(policy: TrafficPolicy(maxRequests: 2, maxRequestsPerHost: nil))
        #expect(queue.arrive(waiter(0), now: .zero) == .granted)
        #expect(queue.arrive(waiter(1), now: .zero) == .granted)
        #expect(queue.arrive(waiter(2), now: .zero) == .queued(granted: []))
        #expect(queue.end(host: "a", weight: 1, now: .zero) == [2])
        #expect(queue.inFlight == 2)
        #expect(queue.waitingCount == 0)
    }

    /// A careless weight with no limit set (the policy only pauses hosts): weights in flight
    /// never add up past `Int.max` (two calls of weight `Int.max` trapped).
    @Test func hugeWeightsWithoutLimitsDoNotOverflow() {
        var queue = TrafficQueue(policy: TrafficPolicy(maxRequests: nil, maxRequestsPerHost: nil))
        let weights = (0..<3).map { _ in queue.takeAtOnce(host: "a", weight: Int.max, now: .zero) }
        #expect(weights.allSatisfy { $0 == 1 })
        #expect(queue.inFlight == 3)
        for weight in weights { _ = queue.end(host: "a", weight: weight ?? 0, now: .zero) }
        #expect(queue.inFlight == 0)
        #expect(queue.takeAtOnce(host: "a", weight: 0, now: .zero) == 0)  // exempt stays exempt
    }

    @Test func prioritiesThenFIFO() {
        var queue = TrafficQueue(policy: TrafficPolicy(maxRequests: 1, maxRequestsPerHost: nil))
        #expect(queue.arrive(waiter(0), now: .zero) == .granted)
        let order: [(UInt64, TrafficClass.Priority)] = [(1, .low), (2, .normal), (3, .high), (4, .normal), (5, .high)]
        for (id, priority) in order { #expect(queue.arrive(waiter(id, priority), now: .zero) == .queued(granted: [])) }
        var served: [UInt64] = []
        for _ in 0..<5 { served += queue.end(host: "a", weight: 1, now: .zero) }
        #expect(served == [3, 5, 2, 4, 1])
    }

    @Test func agingRaisesALowWaiterSoItNeverStarves() {
        var queue = TrafficQueue(
            policy: TrafficPolicy(maxRequests: 1, maxRequestsPerHost: nil, agingInterval: .seconds(1)))
        #expect(queue.arrive(waiter(0), now: .zero) == .granted)
        #expect(queue.arrive(waiter(1, .low, at: .zero), now: .zero) == .queued(granted: []))
        // Two seconds later the low waiter ranks as high; a new high waiter is younger.
        #expect(queue.arrive(waiter(2, .high, at: .seconds(2)), now: .seconds(2)) == .queued(granted: []))
        #expect(queue.end(host: "a", weight: 1, now: .seconds(2)) == [1])
        // After one second, it ranks as normal only: a high waiter goes first.
        var other = TrafficQueue(
            policy: TrafficPolicy(maxRequests: 1, maxRequestsPerHost: nil, agingInterval: .seconds(1)))
        _ = other.arrive(waiter(0), now: .zero)
        _ = other.arrive(waiter(1, .low), now: .zero)
        _ = other.arrive(waiter(2, .high, at: .seconds(1)), now: .seconds(1))
        #expect(other.end(host: "a", weight: 1, now: .seconds(1)) == [2])
    }

    @Test func perHostLimitLetsOtherHostsPass() {
        var queue = TrafficQueue(policy: TrafficPolicy(maxRequests: 10, maxRequestsPerHost: 1))
        #expect(queue.arrive(waiter(0, host: "a"), now: .zero) == .granted)
        #expect(queue.arrive(waiter(1, host: "a"), now: .zero) == .queued(granted: []))
        // Another host has room: it passes the waiter blocked by its own host.
        #expect(queue.arrive(waiter(2, host: "b"), now: .zero) == .queued(granted: [2]))
        #expect(queue.perHost == ["a": 1, "b": 1])
        #expect(queue.end(host: "a", weight: 1, now: .zero) == [1])
    }

    @Test func weightsCountAndAreCappedAndZeroIsExempt() {
        var queue = TrafficQueue(policy: TrafficPolicy(maxRequests: 4, maxRequestsPerHost: nil))
        #expect(queue.effectiveWeight(9) == 4)
        #expect(queue.takeAtOnce(host: "a", weight: 3, now: .zero) == 3)
        #expect(queue.takeAtOnce(host: "a", weight: 2, now: .zero) == nil)
        #expect(queue.takeAtOnce(host: "a", weight: 0, now: .zero) == 0)
        #expect(queue.inFlight == 3)
        // A heavy waiter is not passed by lighter ones that arrive after it.
        #expect(queue.arrive(waiter(1, weight: 2), now: .zero) == .queued(granted: []))
        #expect(queue.arrive(waiter(2, weight: 1), now: .zero) == .queued(granted: []))
        #expect(queue.end(host: "a", weight: 3, now: .zero) == [1, 2])
    }

    @Test func aLeavingWaiterUnblocksTheOthersAndIsGone() {
        var queue = TrafficQueue(policy: TrafficPolicy(maxRequests: 2, maxRequestsPerHost: nil))
        _ = queue.arrive(waiter(0), now: .zero)
        _ = queue.arrive(waiter(1, weight: 2), now: .zero)
        _ = queue.arrive(waiter(2), now: .zero)
        let (left, granted) = queue.leave(1, now: .zero)
        #expect(left)
        #expect(granted == [2])
        #expect(queue.leave(1, now: .zero).left == false)
        #expect(queue.waitingCount == 0)
    }

    @Test func fullQueueIsRefused() {
        var queue = TrafficQueue(policy: TrafficPolicy(maxRequests: 1, maxRequestsPerHost: nil, maxQueuedRequests: 1))
        _ = queue.arrive(waiter(0), now: .zero)
        #expect(queue.arrive(waiter(1), now: .zero) == .queued(granted: []))
        #expect(queue.arrive(waiter(2), now: .zero) == .full(granted: []))
        #expect(queue.waitingCount == 1)
    }

    /// Found by review: waiters for one slow host filled the queue, and a call to an idle host
    /// (room for it there and in the total) was refused as if it had to wait.
    @Test func aQueueFullOfOneHostsWaitersDoesNotRefuseAnIdleHost() {
        var queue = TrafficQueue(policy: TrafficPolicy(maxRequests: 64, maxRequestsPerHost: 1, maxQueuedRequests: 2))
        #expect(queue.arrive(waiter(0, host: "a"), now: .zero) == .granted)
        #expect(queue.arrive(waiter(1, host: "a"), now: .zero) == .queued(granted: []))
        #expect(queue.arrive(waiter(2, host: "a"), now: .zero) == .queued(granted: []))
        #expect(queue.arrive(waiter(3, host: "b"), now: .zero) == .queued(granted: [3]))
        #expect(queue.perHost == ["a": 1, "b": 1])
        // One that would wait is still refused, and leaves nothing behind.
        #expect(queue.arrive(waiter(4, host: "a"), now: .zero) == .full(granted: []))
        #expect(queue.arrive(waiter(5, host: "b"), now: .zero) == .full(granted: []))
        #expect(queue.waitingCount == 2)
        #expect(queue.end(host: "a", weight: 1, now: .zero) == [1])
    }

    /// Found by review: a heavy waiter was passed by every lighter call to its host that came
    /// after it, for as long as they kept coming.
    @Test func aHeavyWaiterIsNotPassedByLighterOnesToItsHost() {
        var queue = TrafficQueue(policy: TrafficPolicy(maxRequests: nil, maxRequestsPerHost: 2))
        #expect(queue.arrive(waiter(0, host: "a"), now: .zero) == .granted)
        #expect(queue.arrive(waiter(1, host: "a", weight: 2), now: .zero) == .queued(granted: []))
        // A lighter call to the same host waits behind it; another host's does not.
        #expect(queue.arrive(waiter(2, host: "a"), now: .zero) == .queued(granted: []))
        #expect(queue.arrive(waiter(3, host: "b"), now: .zero) == .queued(granted: [3]))
        #expect(queue.end(host: "a", weight: 1, now: .zero) == [1])
        #expect(queue.end(host: "a", weight: 2, now: .zero) == [2])

        // Nor by lighter ones of lower priority (found by review of the fix above).
        var mixed = TrafficQueue(policy: TrafficPolicy(maxRequests: nil, maxRequestsPerHost: 2))
        #expect(mixed.arrive(waiter(0, .low, host: "a"), now: .zero) == .granted)
        #expect(mixed.arrive(waiter(1, .high, host: "a", weight: 2), now: .zero) == .queued(granted: []))
        #expect(mixed.arrive(waiter(2, .low, host: "a"), now: .zero) == .queued(granted: []))
        #expect(mixed.end(host: "a", weight: 1, now: .zero) == [1])
    }

    @Test func pausesHoldTheFastPathAndPass() {
        var queue = TrafficQueue(policy: TrafficPolicy())
        queue.pause("a", until: .seconds(10), now: .zero)
        queue.pause("a", until: .seconds(5), now: .zero)
        #expect(queue.pausedUntil("a", now: .seconds(1)) == .seconds(10))
        #expect(queue.takeAtOnce(host: "a", weight: 1, now: .seconds(1)) == nil)
        #expect(queue.takeAtOnce(host: "b", weight: 1, now: .seconds(1)) == 1)
        #expect(queue.pausedUntil("a", now: .seconds(10)) == nil)
        #expect(queue.takeAtOnce(host: "a", weight: 1, now: .seconds(10)) == 1)
    }

    @Test func hostKeys() {
        #expect(
            TrafficController.hostKey(of: URL(string: "https://API.example.com/x")) == "https://api.example.com:443")
        #expect(TrafficController.hostKey(of: URL(string: "http://example.com:8080/")) == "http://example.com:8080")
        #expect(TrafficController.hostKey(of: URL(string: "http://example.com")) == "http://example.com:80")
        #expect(TrafficController.hostKey(of: URL(string: "http://user@[::1]:8080/")) == "http://::1:8080")
        #expect(TrafficController.hostKey(of: nil) == "")
    }

    /// The host key read off the URL's text gives Foundation's answer (`URL.scheme`, `URL.host`,
    /// `URL.port`, lowercased, the scheme's default port) on every kind of URL: case, user info,
    /// ports written oddly, IP literals, queries and fragments right after the host, and the URLs
    /// the text reader leaves to Foundation (percent-encoded and non-ASCII hosts, no authority).
    @Test(arguments: [
        "https://API.example.com/x", "http://example.com:8080/", "http://example.com", "HTTPS://Example.COM:443/a?b#c",
        "https://user:pw@host.test:8443/p", "https://a@b@host.test/", "https://user:p%40ss@Host.Test/x",
        "http://[::1]:8080/x", "http://[::1]/", "https://[2001:DB8::1]/", "http://user@[::1]:80/",
        "http://[fe80::1%25en0]:8080/", "http://[::ffff:127.0.0.1]/", "http://h:/x", "http://h:0080/x",
        "http://h:00443/x", "https://h:99999/", "https://h:8/", "https://h:0/", "ws://h/x", "WSS://h/x", "Wss://h:80/",
        "wss2://h/x", "httpsx://h/", "https://ex%41mple.com/", "https://example.com?x=1", "https://example.com#f",
        "https://example.com:8443?x=1", "https://example.com:8443#f", "http://127.0.0.1:65535/", "ftp://h/",
        "mailto:someone@example.com", "file:///tmp/x", "http:///path", "https://bücher.de/",
        "https://xn--bcher-kva.de/", "https://example.com./", "custom+scheme://Host_Name~x/", "a.b-c+d://H/",
        "https://:8080/", "https://example.com:/", "https://sub.sub.example.co.uk:1/a/b/c?d=e&f=g#h",
    ])
    func hostKeyMatchesFoundation(_ text: String) throws {
        let url = try #require(URL(string: text))
        #expect(TrafficController.hostKey(of: url) == TrafficController.foundationHostKey(of: url))
    }

    /// Ordinary URLs are read off their text, without Foundation's accessors; unusual ones are
    /// left to Foundation.
    @Test func theTextReaderAnswersOrdinaryURLs() throws {
        for text in ["https://API.example.com/x", "http://u:p@h.test:8080/?q", "http://[::1]:8080/", "WSS://h#f"] {
            #expect(TrafficController.textHostKey(of: try #require(URL(string: text))) != nil, "\(text)")
        }
        for text in [
            "https://ex%41mple.com/", "mailto:someone@example.com", "http://[fe80::1%25en0]/", "https://h:000443/",
        ] {
            #expect(TrafficController.textHostKey(of: try #require(URL(string: text))) == nil, "\(text)")
        }
    }

    /// Relative URLs: the key is their absolute URL's.
    @Test func hostKeyOfARelativeURL() throws {
        let base = try #require(URL(string: "HTTPS://Example.com:8443/v1/"))
        let url = try #require(URL(string: "items/1", relativeTo: base))
        #expect(TrafficController.hostKey(of: url) == "https://example.com:8443")
        #expect(TrafficController.hostKey(of: url) == TrafficController.foundationHostKey(of: url))
    }
}
