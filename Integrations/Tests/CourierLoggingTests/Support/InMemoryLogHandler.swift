import Foundation
import Logging

/// A swift-log handler that keeps every entry it is given, for tests.
struct InMemoryLogHandler: LogHandler {
    /// The entries of every logger made with the same store.
    // @unchecked and a lock: swift-log calls `log(event:)` synchronously, from any thread.
    final class Store: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [(level: Logger.Level, message: String)] = []
        var entries: [(level: Logger.Level, message: String)] { lock.withLock { stored } }
        func append(_ level: Logger.Level, _ message: String) { lock.withLock { stored.append((level, message)) } }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.append(event.level, "\(event.message)")
    }
}
