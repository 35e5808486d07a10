import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Durable downloads (issue 27): the partial files one provider keeps, each with the validator of
/// its entity, in a folder of its own under the temporary directory (made when first needed).
///
/// Bounded: at most ``maxEntries`` files (the oldest is removed first), each no larger than the
/// download limit. A file is taken out while an attempt uses it (``checkOut(_:)``), so two calls
/// never write one file; whatever is left when the provider goes away is removed with the folder.
/// Only files this store made are ever removed.
final class PartialDownloads: Sendable {
    /// Partial downloads kept per provider.
    static let maxEntries = 16

    struct Entry: Sendable, Hashable {
        let file: URL
        var offer: ResumeRules.Offer
    }

    private struct State: Sendable {
        var folder: URL?
        var entries: [String: (entry: Entry, order: UInt64)] = [:]
        var next: UInt64 = 0
        /// Files this store made that are out (checked out), removed if still there at the end.
        var made: Set<URL> = []
    }

    private let state = Locked(State())

    /// The partial files kept (not checked out), for tests.
    var count: Int { state.withLock { $0.entries.count } }

    deinit {
        let (folder, files) = state.withLock { ($0.folder, $0.made) }
        for file in files { unlink(file.path) }
        if let folder { rmdir(folder.path) }
    }

    /// Takes the entry kept under `key`, if its file is still as it was left; a file changed or
    /// gone meanwhile is dropped.
    func checkOut(_ key: String) -> Entry? {
        guard let entry = state.withLock({ $0.entries.removeValue(forKey: key)?.entry }) else { return nil }
        var info = stat()
        guard lstat(entry.file.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
            Int64(info.st_size) == entry.offer.length
        else {
            discard(entry)
            return nil
        }
        return entry
    }

    /// Keeps `entry` under `key` (replacing what is there) and removes the oldest beyond the bound.
    func checkIn(_ key: String, _ entry: Entry) {
        let dropped = state.withLock { state -> [Entry] in
            var dropped: [Entry] = []
            if let old = state.entries[key]?.entry, old.file != entry.file { dropped.append(old) }
            state.next += 1
            state.entries[key] = (entry, state.next)
            while state.entries.count > Self.maxEntries,
                let oldest = state.entries.min(by: { $0.value.order < $1.value.order })
            {
                state.entries[oldest.key] = nil
                dropped.append(oldest.value.entry)
            }
            return dropped
        }
        for entry in dropped { discard(entry) }
    }

    /// Moves `segment` (a download's temporary file) into the store's folder: the start of a new
    /// partial file. `nil` if it cannot be moved (it stays where it is).
    func adopt(_ segment: URL, offer: ResumeRules.Offer) -> Entry? {
        guard let folder = folder() else { return nil }
        let file = folder.appendingPathComponent("\(UUID().uuidString).part")
        guard rename(segment.path, file.path) == 0 else { return nil }
        state.withLock { _ = $0.made.insert(file) }
        return Entry(file: file, offer: offer)
    }

    /// Removes an entry's file (made by this store).
    func discard(_ entry: Entry) {
        let made = state.withLock { $0.made.remove(entry.file) != nil }
        if made { unlink(entry.file.path) }
    }

    /// Forgets an entry whose file has been moved elsewhere (it is not this store's any more).
    func release(_ entry: Entry) {
        state.withLock { _ = $0.made.remove(entry.file) }
    }

    /// The store's folder, made on first use (owner only).
    private func folder() -> URL? {
        state.withLock { state -> URL? in
            if let folder = state.folder { return folder }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "courier-partial-\(UUID().uuidString)", isDirectory: true)
            guard mkdir(folder.path, 0o700) == 0 else { return nil }
            state.folder = folder
            return folder
        }
    }

    /// Appends `segment` to `entry`'s file (blocking: call off Swift's pool). Returns the new
    /// length. A limit on the whole file is checked before anything is written.
    static func append(_ segment: URL, to entry: Entry, limit: Int64) throws -> Int64 {
        let input = open(segment.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: segment.path]) }
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0 else { throw CocoaError(.fileReadUnknown) }
        let total = entry.offer.length + Int64(info.st_size)
        guard total <= limit else { throw CourierError.limitExceeded(.downloadBody(limit: limit)) }
        let output = open(entry.file.path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard output >= 0 else { throw CocoaError.error(path: entry.file.path) }
        defer { close(output) }
        // Written at the length on record, whatever is past it.
        guard ftruncate(output, off_t(entry.offer.length)) == 0 else { throw CocoaError.error(path: entry.file.path) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = entry.offer.length
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw CocoaError(.fileReadUnknown) }
            if count == 0 { break }
            guard FileIO.writeAll(Data(buffer[0..<count]), to: output, at: offset) else {
                throw CocoaError.error(path: entry.file.path)
            }
            offset += Int64(count)
        }
        return offset
    }
}
