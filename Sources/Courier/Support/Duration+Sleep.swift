/// The longest wait Courier hands a clock.
extension Duration {
    /// About 146 billion years: as good as never. `ContinuousClock` and `SuspendingClock` trap
    /// ("Not enough bits to represent the passed value") on a sleep that ends past `Int64.max`
    /// seconds, so a wait such as `.seconds(Int64.max)`, a natural way to say "never" for a timeout
    /// or a reconnection time, crashed the process when it began.
    package static let longestSleep: Duration = .seconds(Int64.max / 2)

    /// This duration, cut to ``longestSleep``: what Courier waits on a clock.
    package var sleepable: Duration { min(self, .longestSleep) }
}
