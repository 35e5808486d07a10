/// The hooks a ``Plugin`` implements (``Plugin/implementedHooks``). A provider calls only these,
/// so a plugin that declares the one hook it implements is not called for the other six on every
/// request.
///
/// ```swift
/// struct Signing: Plugin {
///     var implementedHooks: PluginHooks { .prepare }
///     func prepare(_ request: consuming URLRequest, context: RequestContext) async throws -> URLRequest { … }
/// }
/// ```
///
/// In an actor or a `@MainActor` class, declare it `nonisolated var implementedHooks`. A subclass
/// that adds a hook must add it to the set too (override `implementedHooks`), or it is not called.
public struct PluginHooks: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// ``Plugin/prepare(_:context:)``.
    public static let prepare = PluginHooks(rawValue: 1 << 0)
    /// ``Plugin/willSend(_:context:)``.
    public static let willSend = PluginHooks(rawValue: 1 << 1)
    /// ``Plugin/didReceive(_:context:)``.
    public static let didReceive = PluginHooks(rawValue: 1 << 2)
    /// ``Plugin/willRetry(_:after:delay:context:)``.
    public static let willRetry = PluginHooks(rawValue: 1 << 3)
    /// ``Plugin/willRefreshCredential(_:context:)``.
    public static let willRefreshCredential = PluginHooks(rawValue: 1 << 4)
    /// ``Plugin/process(_:context:)``.
    public static let process = PluginHooks(rawValue: 1 << 5)
    /// ``Plugin/didFinish(_:metrics:context:)``.
    public static let didFinish = PluginHooks(rawValue: 1 << 6)

    /// Every hook: ``Plugin/implementedHooks``' default, right for every plugin.
    public static let all: PluginHooks = [
        .prepare, .willSend, .didReceive, .willRetry, .willRefreshCredential, .process, .didFinish,
    ]
}

/// A provider's plugins, hook by hook: for each hook, the plugins whose
/// ``Plugin/implementedHooks`` name it, in the provider's order. Read once, when the provider is
/// made (issue 29: an empty hook costs an async call through the existential, with its frame and
/// executor checks, ≈ 870 instructions).
struct PluginsByHook: Sendable {
    let prepare: [any Plugin]
    let willSend: [any Plugin]
    let didReceive: [any Plugin]
    let willRetry: [any Plugin]
    let willRefreshCredential: [any Plugin]
    let process: [any Plugin]
    let didFinish: [any Plugin]

    init(_ plugins: [any Plugin]) {
        let declared = plugins.map { (plugin: $0, hooks: $0.implementedHooks) }
        func implementing(_ hook: PluginHooks) -> [any Plugin] {
            declared.compactMap { $0.hooks.contains(hook) ? $0.plugin : nil }
        }
        prepare = implementing(.prepare)
        willSend = implementing(.willSend)
        didReceive = implementing(.didReceive)
        willRetry = implementing(.willRetry)
        willRefreshCredential = implementing(.willRefreshCredential)
        process = implementing(.process)
        didFinish = implementing(.didFinish)
    }
}
