import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a file could not be sent as a body (an upload or a multipart file part).
public enum FileBodyFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file does not exist or cannot be read (the reason).
    case unreadable(URL, reason: String)
    /// Not a regular file: a directory, FIFO, socket or device, which would hang or never end.
    case notARegularFile(URL)
    /// The file reports one size and holds another (a `/proc` file reports 0), so no
    /// `Content-Length` can be sent for it.
    case unknownSize(URL)
    /// The file changed size while it was sent (expected, then found).
    case sizeChanged(URL, expected: UInt64, actual: UInt64)

    public var description: String {
        switch self {
        case .unreadable(let url, let reason): "cannot read \(url.path): \(reason)"
        case .notARegularFile(let url): "\(url.path) is not a regular file"
        case .unknownSize(let url): "\(url.path) does not report its real size"
        case .sizeChanged(let url, let expected, let actual):
            "\(url.path) changed size while it was sent (\(expected) bytes, then \(actual))"
        }
    }
}

/// Checks and reads of files sent as bodies. Only regular files are sent: a FIFO blocks a reader
/// forever, `/dev/zero` never ends, a directory hangs FoundationNetworking's upload.
package enum FileBody {
    /// The size of the regular file at `url` (links followed). A file that reports size 0 but has
    /// content (`/proc` files) is refused. Only `stat` and, for empty files, a read of one byte:
    /// never blocks on a regular file.
    package static func regularFileSize(_ url: URL) throws(FileBodyFailure) -> UInt64 {
        guard url.isFileURL else { throw .unreadable(url, reason: "not a file URL") }
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            throw .unreadable(url, reason: String(cString: strerror(errno)))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notARegularFile(url) }
        guard access(url.path, R_OK) == 0 else {
            throw .unreadable(url, reason: String(cString: strerror(errno)))
        }
        if info.st_size == 0 {
            let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { throw .unreadable(url, reason: String(cString: strerror(errno))) }
            defer { close(descriptor) }
            var byte: UInt8 = 0
            if read(descriptor, &byte, 1) > 0 { throw .unknownSize(url) }
        }
        return UInt64(info.st_size)
    }

    /// Reads a whole regular file, refusing one that changes size while read. Blocking: call it
    /// through ``BlockingIO``.
    package static func readAll(_ url: URL, isCancelled: () -> Bool) throws -> Data {
        let expected = try regularFileSize(url)
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var data = Data()
        data.reserveCapacity(Int(clamping: expected))
        while let chunk = try handle.read(upToCount: MultipartEncoder.chunkSize), !chunk.isEmpty {
            if isCancelled() { throw CancellationError() }
            data.append(chunk)
            // A file that grows without end (a log being written) is not read without end.
            if UInt64(data.count) > expected { break }
        }
        guard UInt64(data.count) == expected else {
            throw FileBodyFailure.sizeChanged(url, expected: expected, actual: UInt64(data.count))
        }
        return data
    }

    /// Checks every `interval` that the file at `url` is still a regular file of `size` bytes, and
    /// calls `changed` once if not. Ends when the calling task is cancelled.
    static func watch(
        _ url: URL, size: UInt64, interval: Duration = .milliseconds(50),
        changed: @Sendable (FileBodyFailure) -> Void
    ) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            do {
                let now = try regularFileSize(url)
                if now != size {
                    changed(.sizeChanged(url, expected: size, actual: now))
                    return
                }
            } catch {
                changed(error)
                return
            }
        }
    }
}
