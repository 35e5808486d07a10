/// Whether and how a provider answers a target from its sample response instead of the network.
public enum StubBehavior: Sendable, Hashable {
    /// Send the request over the transport (the default).
    case never
    /// Answer at once with the endpoint's sample response.
    case immediate
    /// Answer with the sample response after waiting `Duration` on the provider's clock.
    case delayed(Duration)
}
