import Courier
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open file descriptor, closed when the last reference goes.
final class Descriptor: Sendable {
    let value: Int32

    init(_ value: Int32) {
        self.value = value
    }

    deinit {
        close(value)
    }
}

/// A file body read from disk as it is sent, 1 MiB at a time on SwiftNIO's thread pool (never on
/// Swift's cooperative pool): AsyncHTTPClient asks for the next chunk only when the connection
/// can take it, so a 1 GiB upload holds a few MiB.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    static let chunkSize = 1 << 20

    let url: URL
    let size: UInt64
    let progress: (@Sendable (TransferProgress) -> Void)?

    func makeAsyncIterator() -> Iterator {
        Iterator(source: self)
    }

    struct Iterator: AsyncIteratorProtocol {
        let source: FileChunks
        var file: Descriptor?
        var offset: UInt64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard offset < source.size else { return nil }
            let file = try self.file ?? Self.open(source.url)
            self.file = file
            let count = Int(Swift.min(UInt64(FileChunks.chunkSize), source.size - offset))
            let (buffer, endSize) = try await NIOThreadPool.singleton.runIfActive { [offset, source] in
                var buffer = ByteBufferAllocator().buffer(capacity: count)
                while buffer.readableBytes < count {
                    let have = buffer.readableBytes
                    let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - have) { pointer in
                        Swift.max(pread(file.value, pointer.baseAddress, count - have, off_t(offset) + off_t(have)), 0)
                    }
                    if read == 0 { break }
                }
                // At the end: a file that grew is refused too.
                var info = stat()
                let now = offset + UInt64(buffer.readableBytes) == source.size && fstat(file.value, &info) == 0
                return (buffer, now ? UInt64(info.st_size) : nil)
            }
            let total = offset + UInt64(buffer.readableBytes)
            guard buffer.readableBytes == count, endSize.map({ $0 == source.size }) ?? true else {
                throw FileBodyFailure.sizeChanged(source.url, expected: source.size, actual: endSize ?? total)
            }
            offset = total
            source.progress?(.sent(bytes: Int64(offset), total: Int64(source.size)))
            return buffer
        }

        private static func open(_ url: URL) throws -> Descriptor {
            let descriptor = systemOpen(url.path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw FileBodyFailure.unreadable(url, reason: String(cString: strerror(errno)))
            }
            return Descriptor(descriptor)
        }
    }
}

/// A body in memory sent in 64 KiB slices, so upload progress is reported as it goes (only
/// when someone asks for progress; otherwise the body is sent whole).
struct DataChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    static let chunkSize = 64 << 10

    let data: Data
    let progress: @Sendable (TransferProgress) -> Void

    func makeAsyncIterator() -> Iterator {
        Iterator(source: self)
    }

    struct Iterator: AsyncIteratorProtocol {
        let source: DataChunks
        var offset = 0

        mutating func next() async throws -> ByteBuffer? {
            guard offset < source.data.count else { return nil }
            let end = Swift.min(offset + DataChunks.chunkSize, source.data.count)
            let start = source.data.startIndex
            let buffer = ByteBuffer(bytes: source.data[(start + offset)..<(start + end)])
            offset = end
            source.progress(.sent(bytes: Int64(offset), total: Int64(source.data.count)))
            return buffer
        }
    }
}

/// A download's destination, written on SwiftNIO's thread pool.
struct DestinationFile: Sendable {
    let url: URL
    let descriptor: Descriptor

    /// Creates (or truncates) the file; a symbolic link in its place is refused.
    static func create(_ url: URL) async throws -> DestinationFile {
        let descriptor = try await NIOThreadPool.singleton.runIfActive { () throws -> Int32 in
            let descriptor = systemOpen(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o666)
            guard descriptor >= 0 else { throw fileError(url) }
            return descriptor
        }
        return DestinationFile(url: url, descriptor: Descriptor(descriptor))
    }

    func write(_ data: Data) async throws {
        try await NIOThreadPool.singleton.runIfActive { [descriptor, url] in
            try data.withUnsafeBytes { bytes in
                var done = 0
                while done < bytes.count {
                    let written = systemWrite(descriptor.value, bytes.baseAddress! + done, bytes.count - done)
                    if written < 0, errno == EINTR { continue }
                    guard written > 0 else { throw DestinationFile.fileError(url) }
                    done += written
                }
            }
        }
    }

    /// Removes the partly written file (Courier created it).
    func remove() async {
        _ = try? await NIOThreadPool.singleton.runIfActive { [url] in unlink(url.path) }
    }

    /// The failed call's `errno` as a Cocoa error naming the file, as URLSessionTransport reports it.
    private static func fileError(_ url: URL) -> CourierError {
        let code = errno
        var info: [String: Any] = [NSFilePathErrorKey: url.path]
        if let posix = POSIXErrorCode(rawValue: code) { info[NSUnderlyingErrorKey] = POSIXError(posix) }
        return CourierError(CocoaError(code == ENOSPC ? .fileWriteOutOfSpace : .fileWriteUnknown, userInfo: info))
    }
}

// The C library's calls, named apart from the types' own `open` and `write`.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 { open(path, flags, mode) }
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
