import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Adds exchanges to fixture files so that none is lost when several `ReplayTransport`s record
/// into one fixture at once — in parallel tests of one process, or in several processes.
///
/// Each write re-reads the file, adds its one exchange, and replaces the file atomically, while
/// holding:
/// - in this process, the fixture's turn in ``shared``, an actor keyed by the fixture's
///   standardized path. This is the one piece of process-wide state CourierTesting keeps, and it
///   has to be process-wide: the transports that share a fixture are separate values made by
///   separate tests, with nothing in common but the path, and each test's writes must see the
///   others'. Waiting for a turn suspends; it blocks no thread;
/// - across processes, an advisory `flock` on the fixture's folder (the fixture itself is replaced
///   by a rename, so a lock on it would not hold across writes, and a lock file would be a file
///   left behind). The folder lock is taken on a thread of its own, never Swift's thread pool.
///
/// In ``ReplayTransport/Mode/record`` the first write to a fixture in this process starts the
/// file anew; every later one, from any transport, adds to it.
actor FixtureWriter {
    /// The writer for this process.
    static let shared = FixtureWriter()

    /// Fixtures being written, and who waits for each.
    private var busy: [String: [CheckedContinuation<Void, Never>]] = [:]
    /// Fixtures this process already started anew in record mode.
    private var startedAnew: Set<String> = []

    /// Adds `entry` to the fixture and writes it.
    /// - Parameters:
    ///   - entry: The exchange.
    ///   - fixture: The file.
    ///   - anew: Whether the first write of this process starts the file anew (record mode).
    /// - Throws: ``ReplayError/unreadableFixture(_:reason:)`` when the file on disk cannot be read
    ///   back; the file system's error when it cannot be written.
    nonisolated func add(_ entry: HAR.Entry, to fixture: URL, anew: Bool) async throws {
        let key = fixture.standardizedFileURL.path
        await turn(key)
        do {
            let fresh = anew ? await startAnew(key) : false
            // Waited for even when the caller is cancelled: the turn passes on only once the
            // write has ended, or the next writer could take the folder's lock first and the
            // first write (starting the file anew) would drop its entry.
            try await BlockingIO.complete { _ in try Self.write(entry, to: fixture, fresh: fresh) }
        } catch {
            await done(key)
            throw error
        }
        await done(key)
    }

    private func turn(_ key: String) async {
        guard busy[key] != nil else {
            busy[key] = []
            return
        }
        await withCheckedContinuation { busy[key, default: []].append($0) }
    }

    private func done(_ key: String) {
        guard var waiting = busy[key], !waiting.isEmpty else {
            busy[key] = nil
            return
        }
        // The turn passes to the next writer; the fixture stays busy.
        let next = waiting.removeFirst()
        busy[key] = waiting
        next.resume()
    }

    private func startAnew(_ key: String) -> Bool {
        startedAnew.insert(key).inserted
    }

    /// Under the folder's lock: the entries on disk (none when `fresh`), plus `entry`, sorted
    /// and written atomically.
    private static func write(_ entry: HAR.Entry, to fixture: URL, fresh: Bool) throws {
        let folder = fixture.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let descriptor = open(folder.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ReplayError.unreadableFixture(fixture, reason: "its folder cannot be opened (errno \(errno))")
        }
        // Closing the descriptor releases the lock.
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw ReplayError.unreadableFixture(fixture, reason: "its folder cannot be locked (errno \(errno))")
            }
        }
        var entries: [HAR.Entry] = []
        if !fresh, FileManager.default.fileExists(atPath: fixture.path) {
            do {
                guard try FileBody.regularFileSize(fixture) <= ReplayTransport.maxFixtureBytes else {
                    throw ReplayError.unreadableFixture(
                        fixture, reason: "larger than \(ReplayTransport.maxFixtureBytes) bytes")
                }
                let data = try FileBody.readAll(fixture, isCancelled: { false })
                entries = try JSONDecoder().decode(HAR.File.self, from: data).log.entries
            } catch let error as ReplayError {
                throw error
            } catch {
                throw ReplayError.unreadableFixture(fixture, reason: "\(error)")
            }
        }
        entries.append(entry)
        // Stable: by URL and method, exchanges of the same request in the order they happened.
        entries = entries.enumerated().sorted {
            ($0.element.request.url, $0.element.request.method, $0.offset)
                < ($1.element.request.url, $1.element.request.method, $1.offset)
        }.map(\.element)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(HAR.File(log: HAR.Log(entries: entries)))
        try (data + Data("\n".utf8)).write(to: fixture, options: .atomic)
    }
}
