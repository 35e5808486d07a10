import Dispatch
import Foundation
import HTTPTypes
import OpenAPIRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns a generated client's request body into what every attempt of the call can send again:
/// the bytes in memory up to a threshold, beyond it a temporary file (spooled), both up to a
/// limit (see ``CourierTransport``).
struct RequestBodySpool: Sendable {
    /// Bodies up to this many bytes stay in memory.
    let memoryThreshold: Int
    /// The largest body, in memory or spooled.
    let maxBytes: Int
    /// Where spool files are created.
    let directory: URL

    /// How many bytes are gathered in memory before one write to the spool file.
    static let writeSize = 256 << 10

    /// The body in memory or in a new temporary file that the caller removes (``remove(_:)``);
    /// `nil` for no body. On any error, cancellation included, the file is already removed.
    func prepare(_ body: HTTPBody?) async throws -> OpenAPIOperation.Body? {
        guard let body else { return nil }
        if case .known(let length) = body.length, length > Int64(maxBytes) {
            throw CourierOpenAPIError.requestBodyTooLarge(limit: maxBytes)
        }
        var pending = Data()
        var file: SpoolFile?
        var closed = false
        var total = 0
        do {
            for try await chunk in body {
                try Task.checkCancellation()
                guard chunk.count <= maxBytes - total else {
                    throw CourierOpenAPIError.requestBodyTooLarge(limit: maxBytes)
                }
                total += chunk.count
                // Through the raw bytes: Data's generic append goes byte by byte when not optimized.
                chunk.withUnsafeBytes { pending.append(contentsOf: $0) }
                if file == nil, total > memoryThreshold {
                    file = try await SpoolFile.create(in: directory)
                }
                if let file, pending.count >= Self.writeSize {
                    try await file.write(pending)
                    pending = Data()
                }
            }
            // An `AsyncStream` ends early, without an error, when its reader is cancelled.
            try Task.checkCancellation()
            guard let file else { return .data(pending) }
            if !pending.isEmpty { try await file.write(pending) }
            closed = true  // Not closed again, even when `close` fails.
            try await file.close()
            return .file(file.url)
        } catch {
            if let file { await file.discard(closing: !closed) }
            throw error
        }
    }

    /// Removes a spool file that ``prepare(_:)`` made; nothing for a body in memory.
    static func remove(_ body: OpenAPIOperation.Body?) {
        guard case .file(let url) = body else { return }
        // One unlink of a file this transport created: it does not wait on anything.
        _ = unlink(url.path)
    }
}

/// A temporary file created for one request body: a new name (never an existing file or a link,
/// `O_EXCL | O_NOFOLLOW`), readable by its owner only, written on a Dispatch queue of its own so
/// that no write holds one of Swift concurrency's few threads.
final class SpoolFile: Sendable {
    /// The file's location.
    let url: URL
    private let descriptor: Int32
    /// Every operation on the descriptor runs here, one at a time.
    private let queue: DispatchQueue

    private init(url: URL, descriptor: Int32, queue: DispatchQueue) {
        self.url = url
        self.descriptor = descriptor
        self.queue = queue
    }

    /// Creates `courier-openapi-body-<UUID>.tmp` in `directory`.
    static func create(in directory: URL) async throws -> SpoolFile {
        let url = directory.appendingPathComponent("courier-openapi-body-\(UUID().uuidString).tmp")
        let queue = DispatchQueue(label: "CourierOpenAPI.SpoolFile")
        let descriptor: Int32 = try await run(on: queue) {
            let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw Self.failure("cannot create it", url: url) }
            return descriptor
        }
        return SpoolFile(url: url, descriptor: descriptor, queue: queue)
    }

    /// Appends `data`, all of it.
    func write(_ data: Data) async throws {
        let (descriptor, url) = (self.descriptor, self.url)
        try await Self.run(on: queue) {
            try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
                guard var address = buffer.baseAddress else { return }
                var remaining = buffer.count
                while remaining > 0 {
                    let written = posixWrite(descriptor, address, remaining)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw Self.failure("cannot write it", url: url)
                    }
                    remaining -= written
                    address += written
                }
            }
        }
    }

    /// Closes the descriptor once written; the file stays for the upload.
    func close() async throws {
        let (descriptor, url) = (self.descriptor, self.url)
        try await Self.run(on: queue) {
            guard posixClose(descriptor) == 0 else { throw Self.failure("cannot close it", url: url) }
        }
    }

    /// Closes the descriptor (unless ``close()`` was called) and removes the file; never throws,
    /// never stops for the caller's cancellation.
    func discard(closing: Bool) async {
        let (descriptor, url) = (self.descriptor, self.url)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                if closing { _ = posixClose(descriptor) }
                _ = unlink(url.path)
                continuation.resume()
            }
        }
    }

    private static func run<T: Sendable>(
        on queue: DispatchQueue, _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    private static func failure(_ what: String, url: URL) -> CourierOpenAPIError {
        .requestBodySpoolFailed(url, reason: "\(what): \(String(cString: strerror(errno)))")
    }
}

// `write` and `close` are also methods of `SpoolFile`: the C functions by other names.
private func posixWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

private func posixClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
