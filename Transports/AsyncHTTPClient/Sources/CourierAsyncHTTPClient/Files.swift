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
/// Swift's cooperative pool): AsyncHTTPClient asks for the next chunk when the connection can
/// take it, and ``Pacing`` keeps the body from running ahead of the connection, so a 1 GiB upload
/// holds a few MiB.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    static let chunkSize = 1 << 20

    let url: URL
    let size: UInt64
    let progress: (@Sendable (TransferProgress) -> Void)?
    /// Told when the connection asks for a part and when the last one was taken.
    let watch: SendWatch.Mark?
    /// The client's event loops, waited for as the body goes out; `nil`: not waited for.
    let pacing: Pacing?

    func makeAsyncIterator() -> Iterator {
        Iterator(source: self, gauge: Pacing.Gauge(pacing))
    }

    struct Iterator: AsyncIteratorProtocol {
        let source: FileChunks
        var file: Descriptor?
        var offset: UInt64 = 0
        var lastByte = LastByteApart()
        var gauge: Pacing.Gauge

        mutating func next() async throws -> ByteBuffer? {
            source.watch?.asked()
            if let last = lastByte.take() {
                // Handed over at once after the part it was held back from (see LastByteApart).
                source.progress?(.sent(bytes: Int64(source.size), total: Int64(source.size)))
                return last
            }
            guard offset < source.size else {
                source.watch?.sent()
                return nil
            }
            let file = try self.file ?? Self.open(source.url)
            self.file = file
            let count = Int(Swift.min(UInt64(FileChunks.chunkSize), source.size - offset))
            // The disk is read while the loops are waited for; the watch counts from after both.
            async let read = NIOThreadPool.singleton.runIfActive { [offset, source] in
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
            _ = try await gauge.beforeHanding(count, endsBody: offset + UInt64(count) == source.size)
            let (buffer, endSize) = try await read
            // Time spent waiting for the loops and the disk is not the connection's.
            source.watch?.asked()
            let total = offset + UInt64(buffer.readableBytes)
            guard buffer.readableBytes == count, endSize.map({ $0 == source.size }) ?? true else {
                throw FileBodyFailure.sizeChanged(source.url, expected: source.size, actual: endSize ?? total)
            }
            offset = total
            var part = buffer
            lastByte.holdBack(from: &part, endsBody: offset == source.size)
            source.progress?(.sent(bytes: Int64(offset) - Int64(lastByte.count), total: Int64(source.size)))
            return part
        }

        /// Opened on the caller's thread, so never waiting: `O_NONBLOCK` (which reads of a regular
        /// file ignore), then refused unless it is a regular file. The size was checked before,
        /// but a FIFO put in the file's place since then would hold the open until a writer came.
        private static func open(_ url: URL) throws -> Descriptor {
            let descriptor = systemOpen(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else {
                throw FileBodyFailure.unreadable(url, reason: String(cString: strerror(errno)))
            }
            let file = Descriptor(descriptor)
            var info = stat()
            guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                throw FileBodyFailure.notARegularFile(url)
            }
            return file
        }
    }
}

/// A body in memory sent in 64 KiB slices, so upload progress is reported as it goes and a
/// stall is seen (when someone asks for progress, or the body is larger than
/// ``AsyncHTTPClientTransport/wholeBodyLimit``; otherwise it is sent whole).
struct DataChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    static let chunkSize = 64 << 10

    let data: Data
    let progress: (@Sendable (TransferProgress) -> Void)?
    /// Told when the connection asks for a part and when the last one was taken.
    let watch: SendWatch.Mark?
    /// The client's event loops, waited for as the body goes out; `nil`: not waited for.
    let pacing: Pacing?

    func makeAsyncIterator() -> Iterator {
        Iterator(source: self, gauge: Pacing.Gauge(pacing))
    }

    struct Iterator: AsyncIteratorProtocol {
        let source: DataChunks
        var offset = 0
        var lastByte = LastByteApart()
        var gauge: Pacing.Gauge

        mutating func next() async throws -> ByteBuffer? {
            let size = source.data.count
            source.watch?.asked()
            if let last = lastByte.take() {
                // Handed over at once after the part it was held back from (see LastByteApart).
                source.progress?(.sent(bytes: Int64(size), total: Int64(size)))
                return last
            }
            guard offset < size else {
                source.watch?.sent()
                return nil
            }
            let end = Swift.min(offset + DataChunks.chunkSize, size)
            // Time waiting for the loops is not counted against the connection (when it is full,
            // the loops catch up at once and the body waits in AsyncHTTPClient).
            if try await gauge.beforeHanding(end - offset, endsBody: end == size) { source.watch?.asked() }
            let start = source.data.startIndex
            var part = ByteBuffer(bytes: source.data[(start + offset)..<(start + end)])
            offset = end
            lastByte.holdBack(from: &part, endsBody: offset == size)
            source.progress?(.sent(bytes: Int64(offset - lastByte.count), total: Int64(size)))
            return part
        }
    }
}

/// A streamed body's last byte, held back from its last part and handed over as a part of its
/// own.
///
/// AsyncHTTPClient 1.37 crashes the process (a force unwrap in its HTTP/2 request handler,
/// swift-server/async-http-client#922) when an HTTP/2 stream closes after a 2xx answer arrived
/// while the request body was still being sent. AsyncHTTPClient ends a streamed body only when
/// the sequence ends, after its last part was written; when that write finds the connection full,
/// it first waits for the connection to drain, and a server that answers as soon as it has the
/// announced length answers in that wait. With the last byte apart, the part before it takes
/// that wait, and the last byte and the end follow at once, with no wait between them. This
/// narrows the window to the scheduling of two consecutive writes; it does not close it, and a
/// server that answers before it has the body is not helped at all: that is why requests with a
/// body to `https` URLs go on ``AsyncHTTPClientTransport/uploadClient`` (HTTP/1.1). This helps
/// only a client of your own given no upload client.
struct LastByteApart {
    private var held: ByteBuffer?

    /// Bytes held back: 0 or 1.
    var count: Int { held?.readableBytes ?? 0 }

    /// The byte held back, once.
    mutating func take() -> ByteBuffer? {
        defer { held = nil }
        return held
    }

    /// Holds back the last byte of `part` when `part` ends the body and has more than one byte.
    mutating func holdBack(from part: inout ByteBuffer, endsBody: Bool) {
        guard endsBody, part.readableBytes > 1, let last = part.getSlice(at: part.writerIndex - 1, length: 1) else {
            return
        }
        part.moveWriterIndex(to: part.writerIndex - 1)
        held = last
    }
}

/// A download's destination, written on SwiftNIO's thread pool.
struct DestinationFile: Sendable {
    let url: URL
    let descriptor: Descriptor

    /// Creates (or truncates) the file; a symbolic link in its place is refused.
    static func create(_ url: URL) async throws -> DestinationFile {
        let descriptor = try await NIOThreadPool.singleton.runIfActive { () throws -> Int32 in
            // Readable by its owner only, as Courier's own downloads (`FileIO.privateFileMode`).
            let descriptor = systemOpen(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
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

    /// Removes the partly written file (Courier created it), also for a caller that was cancelled:
    /// `runIfActive` skips the work of a task cancelled before it starts, which left a cancelled
    /// download's file behind. The removal runs from a task of its own, which no cancel reaches,
    /// on SwiftNIO's thread pool, and is waited for. Found by review.
    func remove() async {
        await Task.detached { [url] in
            _ = try? await NIOThreadPool.singleton.runIfActive { unlink(url.path) }
        }.value
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
