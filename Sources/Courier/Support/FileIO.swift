import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system calls Courier's file writers share.
enum FileIO {
    /// Writes all of `data` to `descriptor`, at `offset` (`pwrite`) or at the file's position
    /// (`write`), again after an interrupted call. `false` on an error (`errno` says which), or if
    /// the system writes nothing.
    static func writeAll(_ data: Data, to descriptor: Int32, at offset: Int64? = nil) -> Bool {
        data.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var done = 0
            while done < raw.count {
                let result =
                    if let offset {
                        pwrite(descriptor, base + done, raw.count - done, off_t(offset) + off_t(done))
                    } else {
                        write(descriptor, base + done, raw.count - done)
                    }
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { return false }
                done += result
            }
            return true
        }
    }

    /// The mode of the download files Courier creates: readable and writable by their owner only.
    /// They start in the shared temporary directory, and a file moved into place is the same inode:
    /// one opened by another user while it was there could be read to its end after the move.
    package static let privateFileMode: mode_t = 0o600

    /// Writes `data` to a file at `url` created (or truncated) with ``privateFileMode``; a
    /// symbolic link in its place is refused. Throws the Cocoa error `Data.write(to:)` would.
    static func writePrivateFile(_ data: Data, to url: URL) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, privateFileMode)
        guard descriptor >= 0 else { throw CocoaError.error(path: url.path) }
        guard writeAll(data, to: descriptor) else {
            let failure = CocoaError.error(path: url.path)
            close(descriptor)
            throw failure
        }
        guard close(descriptor) == 0 else { throw CocoaError.error(path: url.path) }
    }
}

extension CocoaError {
    /// The failed call's `errno` as a Cocoa error naming the file, with the POSIX error under it, as
    /// Foundation's writes report it (`.fileWriteOutOfSpace` for `ENOSPC`). Read `errno` first: call
    /// it right after the failed call, before anything else that may set it (`close`).
    static func error(path: String) -> CocoaError {
        let code = errno
        var info: [String: Any] = [NSFilePathErrorKey: path]
        if let posix = POSIXErrorCode(rawValue: code) { info[NSUnderlyingErrorKey] = POSIXError(posix) }
        return CocoaError(code == ENOSPC ? .fileWriteOutOfSpace : .fileWriteUnknown, userInfo: info)
    }
}
