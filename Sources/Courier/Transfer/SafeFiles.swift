import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Moves a finished download into its folder without following links out of it and without
/// deleting anything but a regular file (see ``DownloadDestination/move(_:to:)``).
enum SafeFiles {
    /// `isCancelled`: read before each megabyte of a copy (a move to another file system); when it
    /// says so, the copy stops, what it wrote is removed, and `CancellationError` is thrown (the
    /// source stays, for the caller to remove).
    /// `link`: `linkat` (tests stand in a file system without hard links, or another one).
    static func move(
        _ source: URL, into root: URL, path components: [String], createFolders: Bool, replace: Bool,
        isCancelled: () -> Bool = { false }, link: Link = { linkat($0, $1, $2, $3, 0) }
    ) throws {
        guard let name = components.last else { throw DownloadFailure.notAFileURL(root) }
        if createFolders, !FileManager.default.fileExists(atPath: root.path) {
            // The caller's own folder: created as given (links in its path are the caller's).
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        }
        var folder = try openFolder(root)
        defer { close(folder) }
        var location = root.standardizedFileURL
        for component in components.dropLast() {
            location.appendPathComponent(component)
            let next = try openSubfolder(component, in: folder, at: location, create: createFolders)
            close(folder)
            folder = next
        }
        let destination = location.appendingPathComponent(name)
        // A caller cancelled by now gets nothing placed (a copy checks again as it goes).
        if isCancelled() { throw CancellationError() }
        try withoutActuallyEscaping(isCancelled) { isCancelled in
            try withoutActuallyEscaping(link) { link in
                try Placing(destination: destination, replace: replace, isCancelled: isCancelled, link: link)
                    .place(source, named: name, in: folder)
            }
        }
    }

    /// `linkat(fromFolder, fromPath, toFolder, toName, 0)`.
    typealias Link = (_ fromFolder: Int32, _ fromPath: String, _ toFolder: Int32, _ toName: String) -> Int32

    private static func openFolder(_ url: URL) throws -> Int32 {
        let descriptor = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw folderError(url) }
        return descriptor
    }

    /// Opens `name` inside `folder` as a folder, never through a link; creates it if asked.
    private static func openSubfolder(_ name: String, in folder: Int32, at url: URL, create: Bool) throws -> Int32 {
        var descriptor = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0, errno == ENOENT, create {
            if mkdirat(folder, name, 0o755) != 0, errno != EEXIST { throw folderError(url) }
            descriptor = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        guard descriptor >= 0 else { throw folderError(url) }
        return descriptor
    }

    private static func folderError(_ url: URL) -> DownloadFailure {
        let reason =
            errno == ELOOP || errno == ENOTDIR
            ? "not a folder (a link or a file is in the way)" : String(cString: strerror(errno))
        return .folderUnavailable(url, reason: reason)
    }

    /// One placing of a download: where it goes, and how.
    private struct Placing {
        let destination: URL
        let replace: Bool
        let isCancelled: () -> Bool
        let link: Link

        /// Puts `source` at `name` in `folder`: linked when nothing is there (atomic, never
        /// replaces), renamed over a regular file when `replace` is set.
        func place(_ source: URL, named name: String, in folder: Int32) throws {
            var existing = stat()
            if fstatat(folder, name, &existing, AT_SYMLINK_NOFOLLOW) == 0 {
                guard (existing.st_mode & S_IFMT) == S_IFREG else {
                    throw DownloadFailure.notARegularFile(destination)
                }
                guard replace else { throw DownloadFailure.fileExists(destination) }
                try renameInto(source, named: name, in: folder)
                return
            }
            if link(AT_FDCWD, source.path, folder, name) == 0 {
                unlink(source.path)
                return
            }
            switch errno {
            case EEXIST:
                // Created meanwhile: decide again with what is there now.
                try place(source, named: name, in: folder)
            case EXDEV:
                // Another file system: copy into the folder under a private name, then place that.
                let staged = try copyIntoFolder(source, folder: folder)
                defer { unlinkat(folder, staged, 0) }
                if link(folder, staged, folder, name) != 0 {
                    if errno == EEXIST {
                        try place(source, named: name, in: folder)
                        return
                    }
                    // A file system without hard links (FAT, exFAT, some network shares):
                    // rename, after the check above, as below. It failed with "operation not
                    // permitted" before (found by review).
                    guard renameat(folder, staged, folder, name) == 0 else { throw SafeFiles.posixError(destination) }
                }
                unlink(source.path)
            default:
                // A file system without hard links: rename, after the check above.
                try renameInto(source, named: name, in: folder)
            }
        }

        private func renameInto(_ source: URL, named name: String, in folder: Int32) throws {
            if renameat(AT_FDCWD, source.path, folder, name) == 0 { return }
            guard errno == EXDEV else { throw SafeFiles.posixError(destination) }
            let staged = try copyIntoFolder(source, folder: folder)
            guard renameat(folder, staged, folder, name) == 0 else {
                let error = SafeFiles.posixError(destination)
                unlinkat(folder, staged, 0)
                throw error
            }
            unlink(source.path)
        }

        /// Copies `source` to a new hidden file in `folder`; returns its name.
        private func copyIntoFolder(_ source: URL, folder: Int32) throws -> String {
            let staged = ".courier-\(UUID().uuidString).part"
            let output = openat(
                folder, staged, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FileIO.privateFileMode)
            guard output >= 0 else { throw SafeFiles.posixError(destination) }
            var closed = false
            defer { if !closed { close(output) } }
            let input = open(source.path, O_RDONLY | O_CLOEXEC)
            guard input >= 0 else {
                unlinkat(folder, staged, 0)
                throw SafeFiles.posixError(source)
            }
            defer { close(input) }
            var buffer = Data(count: 1 << 20)
            while true {
                if isCancelled() {
                    unlinkat(folder, staged, 0)
                    throw CancellationError()
                }
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count >= 0 else {
                    let error = SafeFiles.posixError(source)
                    unlinkat(folder, staged, 0)
                    throw error
                }
                if count == 0 { break }
                guard FileIO.writeAll(buffer.prefix(count), to: output) else {
                    let error = SafeFiles.posixError(destination)
                    unlinkat(folder, staged, 0)
                    throw error
                }
            }
            closed = true
            close(output)
            return staged
        }
    }

    fileprivate static func posixError(_ url: URL) -> CocoaError {
        CocoaError(
            .fileWriteUnknown,
            userInfo: [NSFilePathErrorKey: url.path, NSLocalizedDescriptionKey: String(cString: strerror(errno))])
    }
}
