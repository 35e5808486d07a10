import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Responses kept as files in a folder you name, bounded by ``CacheLimits`` and evicting the
/// least recently used (by file modification time, which a read refreshes).
///
/// - Each response is one file named after the SHA-256 of its key (`<64 hex digits>.courier-cache`):
///   no URL, and so no secret in a URL, ever appears in a file name.
/// - Files are written to a temporary file in the folder and renamed into place, so a reader
///   never sees half a file; a file that is truncated, altered or not what its name says is a
///   miss and is removed.
/// - Files are opened without following symbolic links, and only regular files are read: a link
///   planted in the folder is never followed out of it (it is a miss, left alone).
/// - Only files it names are read, evicted or removed (``removeAll()`` too): other files in the
///   folder are never touched.
/// - File I/O runs off Swift's cooperative threads. The work on one response's file lands in the
///   order it was asked for (a removal never overtakes a write asked for before it), and
///   ``removeAll()`` after every write asked for before it.
/// - Safe to share between providers, and two storages on one folder in one process stay correct
///   (each may evict the other's files; the total is re-counted from the folder when it may be
///   over the limit).
public actor DiskCacheStorage: CacheStorage {
    /// The folder.
    public nonisolated let folder: URL
    /// The bounds.
    public nonisolated let limits: CacheLimits
    private nonisolated let path: String

    /// The bytes and files written since the folder was last counted; `nil` before the first count.
    private var estimate: (bytes: Int, files: Int)?
    /// The last modification time this storage gave a file: each use gets a later one, so the
    /// least recently used is known even when the file system's clock is coarser than the uses.
    private var lastStamp: Double = 0

    /// The last file work asked for on each file, running or waiting its turn: work on one file
    /// runs in the order it was asked for. The actor lets a second call in while the first waits
    /// for its thread, and the unlink of an invalidation (``removeResponse(forKey:)``) that
    /// overtook a write still going on let the entry it removed come back.
    private var lastWork: [String: (id: UInt64, wait: @Sendable () async -> Void)] = [:]
    private var workSerial: UInt64 = 0

    /// Runs `work` on a thread of its own once the work asked for before on `file` has ended. The
    /// work goes on in its turn whatever happens to the caller (the next work on the file waits
    /// for it); a cancelled caller is answered at once with `nil`.
    private func inOrder<T: Sendable>(on file: String, _ work: @escaping @Sendable () -> T) async -> T? {
        let previous = lastWork[file]?.wait
        workSerial &+= 1
        let id = workSerial
        let task = Task { () -> T? in
            await previous?()
            let result = try? await BlockingIO.complete { _ in work() }
            if lastWork[file]?.id == id { lastWork[file] = nil }
            return result
        }
        lastWork[file] = (id, { _ = await task.value })
        return await FirstResult.value(of: { await task.value }, orOnCancel: nil)
    }

    private func nextStamp() -> Double {
        lastStamp = max(Date().timeIntervalSince1970, lastStamp + 0.000_001)
        return lastStamp
    }

    static let suffix = ".courier-cache"
    static let temporaryPrefix = ".courier-cache-"

    /// Creates a storage in `folder`, creating the folder (and its parents) if needed.
    /// - Parameters:
    ///   - folder: A folder for the cache alone is best; files Courier did not write are left alone.
    ///   - limits: The bounds. Default: ``CacheLimits/diskDefault`` (256 MiB, 8 MiB per response).
    /// - Throws: ``CourierError/invalidUse(_:)`` when `folder` is not a file URL, or exists and is
    ///   not a folder, or cannot be created, or belongs to another user or is writable by every
    ///   user (anyone who can write it could plant responses).
    public init(folder: URL, limits: CacheLimits = .diskDefault) throws(CourierError) {
        guard folder.isFileURL else { throw .invalidUse("the cache folder must be a file URL") }
        let resolved = folder.standardizedFileURL.resolvingSymlinksInPath()
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: resolved.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw .invalidUse("the cache folder \(resolved.path) exists and is not a folder")
            }
        } else {
            do {
                try FileManager.default.createDirectory(
                    at: resolved, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw .invalidUse("the cache folder \(resolved.path) cannot be created: \(error.localizedDescription)")
            }
        }
        // Whoever can write the folder can plant entries that decode (the checksum finds damage,
        // not forgery): a folder of another user's, or one every user may write, is refused.
        var status = stat()
        guard stat(resolved.path, &status) == 0 else {
            throw .invalidUse("the cache folder \(resolved.path) cannot be read: \(String(cString: strerror(errno)))")
        }
        guard status.st_uid == geteuid() else {
            throw .invalidUse(
                "the cache folder \(resolved.path) belongs to another user, who could plant responses in it; "
                    + "use a folder of your own")
        }
        guard status.st_mode & 0o002 == 0 else {
            throw .invalidUse(
                "the cache folder \(resolved.path) is writable by every user, who could plant responses in it; "
                    + "use a folder only you can write (the folder DiskCacheStorage creates is 0700)")
        }
        self.folder = resolved
        self.limits = limits
        self.path = resolved.path
    }

    /// The file name for `key`.
    static func fileName(for key: String) -> String {
        CacheRules.hex(SHA256.hash(Data(key.utf8))) + suffix
    }

    public func response(forKey key: String) async -> CachedResponse? {
        let file = path + "/" + Self.fileName(for: key)
        let maxSize = CacheEntryCodec.maxFileSize(limits)
        let stamp = nextStamp()
        let read = await inOrder(on: file) { Self.readFile(file, maxSize: maxSize, key: key, stamp: stamp) }
        guard let read else { return nil }
        switch read {
        case .found(let response): return response
        case .absent: return nil
        case .corrupt:
            // A regular file with the name this storage gives its files, that does not decode: the
            // read removed it.
            return nil
        }
    }

    public func store(_ response: CachedResponse, forKey key: String) async {
        let file = path + "/" + Self.fileName(for: key)
        // Written in parts: the body is not copied (issue 26: peak memory with large entries).
        guard limits.admits(response), let parts = CacheEntryCodec.encodeParts(response),
            parts.reduce(0, { $0 + $1.count }) <= CacheEntryCodec.maxFileSize(limits)
        else {
            _ = await inOrder(on: file) { Self.removeRegularFile(file) }
            return
        }
        let (folder, stamp) = (path, nextStamp())
        let written =
            await inOrder(on: file) { Self.writeAtomically(parts, to: file, in: folder, stamp: stamp) } ?? false
        guard written else { return }
        // The first write counts the folder: it may hold files from an earlier run.
        let unknown = self.estimate == nil
        var estimate = self.estimate ?? (0, 0)
        estimate.bytes += parts.reduce(0) { $0 + $1.count }
        estimate.files += 1
        self.estimate = estimate
        if unknown || estimate.bytes > limits.maxTotalBytes || estimate.files > limits.maxEntries {
            await evict()
        }
    }

    public func removeResponse(forKey key: String) async {
        let file = path + "/" + Self.fileName(for: key)
        _ = await inOrder(on: file) { Self.removeRegularFile(file) }
    }

    public func removeAll() async {
        // After every file work asked for before it: a write still going on would outlive it.
        for work in lastWork.values { await work.wait() }
        let folder = path
        _ = try? await BlockingIO.run { _ in
            for file in Self.listing(folder) { unlink(folder + "/" + file.name) }
        }
        estimate = (0, 0)
    }

    /// Counts the folder and removes the least recently used files until it is within the limits.
    private func evict() async {
        let (folder, limits) = (path, limits)
        let counted = try? await BlockingIO.run { _ -> (Int, Int) in
            var files = Self.listing(folder).sorted { $0.modified < $1.modified }
            var bytes = files.reduce(0) { $0 + $1.size }
            while !files.isEmpty, bytes > limits.maxTotalBytes || files.count > limits.maxEntries {
                let oldest = files.removeFirst()
                if unlink(folder + "/" + oldest.name) == 0 || errno == ENOENT { bytes -= oldest.size }
            }
            return (bytes, files.count)
        }
        estimate = counted.map { (bytes: $0.0, files: $0.1) }
    }

    // MARK: - Blocking file work (runs on BlockingIO's threads)

    enum ReadResult {
        case found(CachedResponse)
        case absent
        case corrupt
    }

    static func readFile(_ file: String, maxSize: Int, key: String, stamp: Double) -> ReadResult {
        // O_NOFOLLOW: a link is not followed; O_NONBLOCK: a FIFO planted here cannot block the open.
        let descriptor = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return .absent }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return .absent }
        let result = decodeFile(descriptor, size: Int(status.st_size), maxSize: maxSize, key: key, stamp: stamp)
        // Removed in the same work as the read, and only the very file that was read: a removal
        // asked for afterwards would run after a write asked for meanwhile, and take the good
        // file it put there.
        if case .corrupt = result {
            var now = stat()
            if lstat(file, &now) == 0, now.st_dev == status.st_dev, now.st_ino == status.st_ino { unlink(file) }
        }
        return result
    }

    private static func decodeFile(
        _ descriptor: Int32, size: Int, maxSize: Int, key: String, stamp: Double
    ) -> ReadResult {
        guard size <= maxSize else { return .corrupt }
        // Read in parts, so that the body is read into a buffer of its own and kept as it is (a
        // whole-file buffer would be copied once more to give the body indices from zero).
        guard let prefix = readExactly(descriptor, CacheEntryCodec.prefixLength),
            let lengths = CacheEntryCodec.lengths(prefix: prefix, size: size),
            let json = readExactly(descriptor, lengths.head), let body = readExactly(descriptor, lengths.body),
            let checksum = readExactly(descriptor, size - CacheEntryCodec.prefixLength - lengths.head - lengths.body),
            let response = CacheEntryCodec.decode(json: json, body: body, checksum: checksum, key: key)
        else { return .corrupt }
        // Least recently used is read off the modification time: a read makes it recent.
        touch(descriptor, stamp)
        return .found(response)
    }

    /// `count` bytes from `descriptor`, or `nil` when the file ends first or a read fails.
    static func readExactly(_ descriptor: Int32, _ count: Int) -> Data? {
        guard count >= 0 else { return nil }
        var data = Data(count: count)
        let complete = data.withUnsafeMutableBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return count == 0 }
            var done = 0
            while done < count {
                let result = read(descriptor, base + done, count - done)
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { return false }
                done += result
            }
            return true
        }
        return complete ? data : nil
    }

    static func writeAtomically(_ parts: [Data], to file: String, in folder: String, stamp: Double) -> Bool {
        let temporary = folder + "/" + temporaryPrefix + UUID().uuidString
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        let written = parts.allSatisfy { FileIO.writeAll($0, to: descriptor) }
        touch(descriptor, stamp)
        close(descriptor)
        // rename replaces the name itself: a link planted under that name is replaced, not followed.
        guard written, rename(temporary, file) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    /// Sets the file's access and modification times to `stamp` (seconds since 1970).
    private static func touch(_ descriptor: Int32, _ stamp: Double) {
        let seconds = stamp.rounded(.down)
        let time = timespec(tv_sec: Int(seconds), tv_nsec: Int((stamp - seconds) * 1e9))
        let times = [time, time]
        _ = times.withUnsafeBufferPointer { futimens(descriptor, $0.baseAddress) }
    }

    @discardableResult
    static func removeRegularFile(_ file: String) -> Bool {
        var status = stat()
        guard lstat(file, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return false }
        return unlink(file) == 0
    }

    /// `<64 lowercase hex digits>.courier-cache`: a name ``fileName(for:)`` gives, and no other.
    static func isEntryName(_ name: String) -> Bool {
        guard name.hasSuffix(suffix), name.utf8.count == 64 + suffix.utf8.count else { return false }
        return name.utf8.prefix(64).allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// `.courier-cache-<UUID>`: a name ``writeAtomically(_:to:in:stamp:)`` gives, and no other
    /// (a file of the caller's that merely starts with the prefix is not this storage's to delete).
    static func isTemporaryName(_ name: String) -> Bool {
        guard name.hasPrefix(temporaryPrefix) else { return false }
        let rest = String(name.dropFirst(temporaryPrefix.count))
        return rest.utf8.count == 36 && UUID(uuidString: rest) != nil
    }

    /// The regular files in `folder` that this storage names: entries, and temporary files left
    /// by a process that ended mid-write over ten minutes ago (listed as the oldest, so they go
    /// first; a newer one may be another storage's write in progress).
    static func listing(_ folder: String) -> [(name: String, size: Int, modified: Double)] {
        let abandoned = Date().timeIntervalSince1970 - 600
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var files: [(name: String, size: Int, modified: Double)] = []
        for name in names {
            let isEntry = isEntryName(name)
            let isTemporary = isTemporaryName(name)
            guard isEntry || isTemporary else { continue }
            var status = stat()
            guard lstat(folder + "/" + name, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { continue }
            #if canImport(Darwin)
                let modified = Double(status.st_mtimespec.tv_sec) + Double(status.st_mtimespec.tv_nsec) / 1e9
            #else
                let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
            #endif
            if isTemporary, modified > abandoned { continue }
            files.append((name, Int(status.st_size), isTemporary ? -1 : modified))
        }
        return files
    }
}
