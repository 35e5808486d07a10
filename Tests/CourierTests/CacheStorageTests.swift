import Foundation
import Testing

@testable import Courier

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Memory and disk storage: bounds, eviction, and what a hostile folder or response cannot do.
@Suite(.timeLimit(.minutes(2))) struct CacheStorageTests {
    static func entry(_ path: String, body: Int = 100, headers: [String: String] = [:]) -> CachedResponse {
        CachedResponse(
            url: URL(string: "https://api.example.com/\(path)?token=s3cret")!, statusCode: 200,
            headers: ["Cache-Control": "max-age=60"].merging(headers) { $1 }, body: Data(repeating: 7, count: body),
            requestTime: Date(timeIntervalSince1970: 1_000), responseTime: Date(timeIntervalSince1970: 1_001),
            varyDigests: [:])
    }

    static func key(_ entry: CachedResponse) -> String { CacheRules.key(for: entry.url)! }

    /// A fresh folder under the temporary directory, removed by `body`'s caller.
    static func withFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder)
    }

    static func files(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    @Test func memoryEvictsTheLeastRecentlyUsed() async {
        let a = Self.entry("a")
        let storage = MemoryCacheStorage(limits: CacheLimits(maxTotalBytes: a.byteCount * 3))
        let (b, c, d) = (Self.entry("b"), Self.entry("c"), Self.entry("d"))
        for entry in [a, b, c] { await storage.store(entry, forKey: Self.key(entry)) }
        #expect(await storage.response(forKey: Self.key(a)) == a)  // a is now the most recent
        await storage.store(d, forKey: Self.key(d))
        #expect(await storage.response(forKey: Self.key(b)) == nil)
        #expect(await storage.response(forKey: Self.key(a)) == a)
        #expect(await storage.count == 3)
        #expect(await storage.totalBytes <= a.byteCount * 3)
        // Replacing an entry does not count it twice.
        await storage.store(a, forKey: Self.key(a))
        #expect(await storage.totalBytes == a.byteCount * 3)
    }

    @Test func memoryRefusesWhatCrossesALimit() async {
        let storage = MemoryCacheStorage(
            limits: CacheLimits(maxTotalBytes: 1 << 20, maxEntryBytes: 10_000, maxEntries: 2, maxHeaderFields: 8))
        let big = Self.entry("big", body: 20_000)
        await storage.store(big, forKey: Self.key(big))
        #expect(await storage.count == 0)
        let manyHeaders = Self.entry(
            "headers", headers: Dictionary(uniqueKeysWithValues: (0..<50).map { ("X-\($0)", "v") }))
        await storage.store(manyHeaders, forKey: Self.key(manyHeaders))
        #expect(await storage.count == 0)
        for name in ["1", "2", "3"] { await storage.store(Self.entry(name), forKey: Self.key(Self.entry(name))) }
        #expect(await storage.count == 2)
        await storage.removeAll()
        #expect(await storage.count == 0)
        #expect(await storage.totalBytes == 0)
    }

    /// Limits of `Int.max` (a caller's "no limit") or below zero are not an overflow trap on the
    /// first read or store. Found by review.
    @Test(arguments: [Int.max, Int.max / 6 + 1, -1])
    func extremeDiskLimitsDoNotTrap(limit: Int) async throws {
        try await Self.withFolder { folder in
            let storage = try DiskCacheStorage(
                folder: folder,
                limits: CacheLimits(maxTotalBytes: .max, maxEntryBytes: limit, maxHeaderBytes: limit))
            let entry = Self.entry("users/1")
            #expect(await storage.response(forKey: Self.key(entry)) == nil)
            await storage.store(entry, forKey: Self.key(entry))
            let expected = limit < 0 ? nil : entry
            #expect(await storage.response(forKey: Self.key(entry)) == expected)
        }
    }

    @Test func diskRoundTripsUnderHashedNames() async throws {
        try await Self.withFolder { folder in
            let storage = try DiskCacheStorage(folder: folder)
            let entry = Self.entry("users/1", headers: ["ETag": "\"v1\"", "Content-Type": "application/json"])
            await storage.store(entry, forKey: Self.key(entry))
            #expect(await storage.response(forKey: Self.key(entry)) == entry)
            let names = Self.files(in: folder)
            #expect(names == [DiskCacheStorage.fileName(for: Self.key(entry))])
            #expect(names.allSatisfy { !$0.contains("users") && !$0.contains("s3cret") && !$0.contains("api") })
            // Another storage on the same folder reads it too.
            #expect(await (try DiskCacheStorage(folder: folder)).response(forKey: Self.key(entry)) == entry)
            await storage.removeResponse(forKey: Self.key(entry))
            #expect(Self.files(in: folder).isEmpty)
        }
    }

    /// A removal asked for while the write of the same entry is still going on lands after it:
    /// the invalidation after an unsafe request is not undone by a store that began before it.
    /// (The removal is asked for from the storage's own executor the moment the store waits for
    /// its thread; a 4 MiB write takes longer than an unlink.)
    @Test func aRemovalAskedForDuringAWriteLandsAfterIt() async throws {
        try await Self.withFolder { folder in
            let storage = try DiskCacheStorage(folder: folder)
            for round in 0..<3 {
                let entry = Self.entry("big-\(round)", body: 4 << 20)
                await storage.storeWhileRemoving(entry, forKey: Self.key(entry))
                #expect(await storage.response(forKey: Self.key(entry)) == nil, "round \(round)")
                #expect(Self.files(in: folder).isEmpty, "round \(round)")
            }
        }
    }

    /// `removeAll()` waits for the writes asked for before it.
    @Test func removeAllLandsAfterTheWritesBeforeIt() async throws {
        try await Self.withFolder { folder in
            let storage = try DiskCacheStorage(folder: folder)
            let entry = Self.entry("big", body: 4 << 20)
            await storage.storeWhileRemovingAll(entry, forKey: Self.key(entry))
            #expect(await storage.response(forKey: Self.key(entry)) == nil)
            #expect(Self.files(in: folder).isEmpty)
        }
    }

    @Test func corruptAndTruncatedFilesAreMissesAndRemoved() async throws {
        try await Self.withFolder { folder in
            let storage = try DiskCacheStorage(folder: folder)
            let entry = Self.entry("a", body: 1_000)
            let key = Self.key(entry)
            let file = folder.appendingPathComponent(DiskCacheStorage.fileName(for: key))
            await storage.store(entry, forKey: key)
            let valid = try Data(contentsOf: file)
            var flipped = valid
            flipped[valid.count - 100] ^= 0xFF  // a byte of the body
            for damaged in [Data("garbage".utf8), valid.prefix(valid.count / 2), flipped, valid + Data([0]), Data()] {
                try damaged.write(to: file)
                #expect(await storage.response(forKey: key) == nil)
                #expect(!FileManager.default.fileExists(atPath: file.path))
            }
            // A valid file under another key's name is not that key's response.
            let other = Self.entry("b")
            try valid.write(to: folder.appendingPathComponent(DiskCacheStorage.fileName(for: Self.key(other))))
            #expect(await storage.response(forKey: Self.key(other)) == nil)
        }
    }

    @Test func linksAreNotFollowedOutOfTheFolder() async throws {
        try await Self.withFolder { folder in
            let storage = try DiskCacheStorage(folder: folder)
            let entry = Self.entry("a")
            let key = Self.key(entry)
            // A valid entry outside the folder, and a link to it under the entry's name.
            let outside = folder.deletingLastPathComponent().appendingPathComponent("outside-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: outside) }
            try CacheEntryCodec.encode(entry)!.write(to: outside)
            let link = folder.appendingPathComponent(DiskCacheStorage.fileName(for: key))
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: outside)
            #expect(await storage.response(forKey: key) == nil)
            // Storing replaces the link itself; the file it pointed to is untouched.
            let before = try Data(contentsOf: outside)
            await storage.store(Self.entry("a", body: 5), forKey: key)
            #expect(try Data(contentsOf: outside) == before)
            #expect(await storage.response(forKey: key)?.body.count == 5)
            await storage.removeAll()
            #expect(FileManager.default.fileExists(atPath: outside.path))
        }
    }

    @Test func hugeAndSpecialFilesAreNeverRead() async throws {
        try await Self.withFolder { folder in
            let limits = CacheLimits(maxTotalBytes: 1 << 20, maxEntryBytes: 64 << 10)
            let storage = try DiskCacheStorage(folder: folder, limits: limits)
            // A response over the entry limit is not stored.
            let big = Self.entry("big", body: 100 << 10)
            await storage.store(big, forKey: Self.key(big))
            #expect(Self.files(in: folder).isEmpty)
            // A 1 GiB (sparse) file under an entry's name is removed without being read.
            let huge = folder.appendingPathComponent(DiskCacheStorage.fileName(for: Self.key(big)))
            #expect(FileManager.default.createFile(atPath: huge.path, contents: nil))
            let handle = try FileHandle(forWritingTo: huge)
            try handle.truncate(atOffset: 1 << 30)
            try handle.close()
            #expect(await storage.response(forKey: Self.key(big)) == nil)
            #expect(!FileManager.default.fileExists(atPath: huge.path))
            // A FIFO under an entry's name cannot block the read.
            let fifoEntry = Self.entry("fifo")
            let fifo = folder.appendingPathComponent(DiskCacheStorage.fileName(for: Self.key(fifoEntry)))
            #expect(mkfifo(fifo.path, 0o600) == 0)
            #expect(await storage.response(forKey: Self.key(fifoEntry)) == nil)
        }
    }

    @Test func diskStaysWithinItsLimitsAndRemovesOnlyItsFiles() async throws {
        try await Self.withFolder { folder in
            let one = CacheEntryCodec.encode(Self.entry("0", body: 1_000))!.count
            let storage = try DiskCacheStorage(
                folder: folder, limits: CacheLimits(maxTotalBytes: one * 5, maxEntries: 100))
            try Data("mine".utf8).write(to: folder.appendingPathComponent("notes.txt"))
            for index in 0..<20 {
                let entry = Self.entry("\(index)", body: 1_000)
                await storage.store(entry, forKey: Self.key(entry))
            }
            let entries = Self.files(in: folder).filter { $0.hasSuffix(".courier-cache") }
            #expect(entries.count <= 5)
            #expect(await storage.response(forKey: Self.key(Self.entry("19"))) != nil)
            #expect(await storage.response(forKey: Self.key(Self.entry("0"))) == nil)
            await storage.removeAll()
            #expect(Self.files(in: folder) == ["notes.txt"])
        }
    }

    /// Files of the caller's whose names merely look like the storage's (the temporary prefix
    /// with no UUID after it, 64 characters that are not hex digits before the suffix) are not
    /// its files: neither eviction nor removeAll deletes them, however old they are.
    @Test func lookalikeNamesAreNotTheStoragesToDelete() async throws {
        try await Self.withFolder { folder in
            let one = CacheEntryCodec.encode(Self.entry("0", body: 1_000))!.count
            let storage = try DiskCacheStorage(
                folder: folder, limits: CacheLimits(maxTotalBytes: one * 2, maxEntries: 100))
            let lookalikes = [
                ".courier-cache-notes", ".courier-cache-" + String(repeating: "x", count: 36),
                String(repeating: "Z", count: 64) + ".courier-cache",
            ]
            for name in lookalikes {
                let file = folder.appendingPathComponent(name)
                try Data("mine".utf8).write(to: file)
                // Old enough to pass for a temporary file abandoned long ago.
                try FileManager.default.setAttributes(
                    [.modificationDate: Date(timeIntervalSince1970: 1_000)], ofItemAtPath: file.path)
            }
            for index in 0..<6 {
                let entry = Self.entry("\(index)", body: 1_000)
                await storage.store(entry, forKey: Self.key(entry))
            }
            #expect(Set(lookalikes).isSubset(of: Self.files(in: folder)))
            await storage.removeAll()
            #expect(Self.files(in: folder) == lookalikes.sorted())
        }
    }

    @Test func aFolderThatIsAFileIsRefused() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-file-\(UUID().uuidString)")
        try Data().write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: CourierError.self) { try DiskCacheStorage(folder: file) }
        #expect(throws: CourierError.self) { try DiskCacheStorage(folder: URL(string: "https://example.com/cache")!) }
    }

    /// Anyone who can write the folder can plant an entry that decodes (the checksum finds
    /// damage, not forgery): a folder every user may write (as `/tmp` itself) is refused.
    @Test func aFolderEveryUserMayWriteIsRefused() async throws {
        try await Self.withFolder { folder in
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
            #expect(throws: CourierError.self) { try DiskCacheStorage(folder: folder) }
            try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: folder.path)
            #expect(throws: CourierError.self) { try DiskCacheStorage(folder: folder) }
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
            _ = try DiskCacheStorage(folder: folder)
        }
    }

    @Test func storagesSharingAFolderStayConsistent() async throws {
        try await Self.withFolder { folder in
            let limits = CacheLimits(maxTotalBytes: 40_000)
            let first = try DiskCacheStorage(folder: folder, limits: limits)
            let second = try DiskCacheStorage(folder: folder, limits: limits)
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<64 {
                    let storage = index.isMultiple(of: 2) ? first : second
                    group.addTask {
                        let entry = Self.entry("shared-\(index % 8)", body: 1_000 + index)
                        await storage.store(entry, forKey: Self.key(entry))
                        if let read = await storage.response(forKey: Self.key(entry)) {
                            // Whole entries only, never a mix of two writes.
                            #expect(read.url == entry.url)
                            #expect(read.body.allSatisfy { $0 == 7 })
                        }
                    }
                }
            }
            let names = Self.files(in: folder)
            #expect(names.allSatisfy { $0.hasSuffix(".courier-cache") })  // no temporary file left behind
            #expect(names.count <= 8)
        }
    }
}

extension DiskCacheStorage {
    /// Stores `entry`, and asks for its removal once the store waits for its file work (the task
    /// made here runs on this actor as soon as the store suspends).
    fileprivate func storeWhileRemoving(_ entry: CachedResponse, forKey key: String) async {
        let removal = Task { await self.removeResponse(forKey: key) }
        await store(entry, forKey: key)
        await removal.value
    }

    fileprivate func storeWhileRemovingAll(_ entry: CachedResponse, forKey key: String) async {
        let removal = Task { await self.removeAll() }
        await store(entry, forKey: key)
        await removal.value
    }
}
