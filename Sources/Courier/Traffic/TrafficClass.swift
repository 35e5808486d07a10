/// How a target's requests take part in a provider's traffic control (``TrafficPolicy``): their
/// priority in the queue and how many slots each one takes.
///
/// ```swift
/// var traffic: TrafficClass { self == .thumbnail ? .low : .normal }
/// ```
public struct TrafficClass: Sendable, Hashable {
    /// The order in which waiting calls are served.
    public enum Priority: Int, Sendable, Hashable, CaseIterable, Comparable {
        /// Served first.
        case high = 0
        /// The default.
        case normal = 1
        /// Served when no higher-priority call waits (or once it has aged; see
        /// ``TrafficPolicy/agingInterval``).
        case low = 2

        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The priority in the queue. Default: ``Priority/normal``.
    public var priority: Priority
    /// How many slots one request takes, towards both limits. `0`: the request is exempt (it
    /// never waits for a slot and counts towards no limit; a shared pause still holds it). A
    /// weight above a limit counts as that limit. Negative values count as `0`. Default: 1.
    public var weight: Int

    /// Creates a traffic class.
    /// - Parameters:
    ///   - priority: The priority in the queue. Default: ``Priority/normal``.
    ///   - weight: Slots per request; `0` exempts it. Default: 1.
    public init(priority: Priority = .normal, weight: Int = 1) {
        self.priority = priority
        self.weight = max(0, weight)
    }

    /// Normal priority, one slot: every target's default.
    public static let normal = TrafficClass()
    /// High priority, one slot.
    public static let high = TrafficClass(priority: .high)
    /// Low priority, one slot.
    public static let low = TrafficClass(priority: .low)
    /// Counts towards no limit and never waits for a slot (a shared pause still holds it).
    public static let exempt = TrafficClass(weight: 0)
}

extension TargetType {
    public var traffic: TrafficClass { .normal }
}
