import Foundation

/// A `multipart/form-data` body (RFC 7578): named parts from data, files or streams.
///
/// ```swift
/// let form = MultipartFormData(parts: [
///     .init(name: "title", data: Data("Holiday".utf8)),
///     .init(name: "photo", fileURL: photoURL),                    // MIME type from the extension
///     .init(name: "log", stream: { InputStream(url: logURL)! }, length: logSize,
///           fileName: "log.txt", mimeType: "text/plain"),
/// ])
/// ```
///
/// Bodies up to ``memoryThreshold`` are built in memory; larger ones are written to a temporary
/// file and uploaded from it, so a 1 GiB body never sits in memory. That file is always removed,
/// after success, failure or cancellation.
///
/// The request ``Endpoint/urlRequest()`` builds carries the encoded form as its `httpBody` (as
/// Moya's does) when the form fits in memory without reading much: only data parts, up to
/// ``memoryThreshold``; or data and file parts, up to ``maxBodyReadInRequest`` (and
/// ``memoryThreshold``). Larger forms, and forms with a stream part, are built when the request
/// is sent, off Swift's thread pool, and that request has no `httpBody`; a plugin that must sign
/// the body gets it from ``encodedBody(maxBytes:)``.
public struct MultipartFormData: Sendable, Hashable {
    /// The default for ``memoryThreshold``: 10 MB.
    public static let defaultMemoryThreshold = 10_000_000

    /// The largest form with file parts whose body ``Endpoint/urlRequest()`` builds (reading the
    /// files there, on the calling thread): 1 MiB. A larger one is built when it is sent.
    public static let maxBodyReadInRequest = 1 << 20

    /// The boundary between parts.
    public let boundary: String
    /// Whether the caller chose the boundary: file and stream parts are then searched for it as
    /// they are sent (a random one cannot be in them).
    let boundaryIsChosen: Bool
    /// The parts, in order.
    public var parts: [Part]
    /// Bodies larger than this many bytes are written to a temporary file instead of memory.
    public var memoryThreshold: Int

    /// Creates a form.
    /// - Parameters:
    ///   - boundary: The boundary: 1 to 70 characters from RFC 2046's set (letters, digits and
    ///     `'()+_,-./:=?` and space, not ending in a space). Default: a random one.
    ///   - parts: The parts, in order.
    ///   - memoryThreshold: Above this many bytes the body goes through a temporary file.
    ///     Default: ``defaultMemoryThreshold`` (10 MB).
    public init(boundary: String? = nil, parts: [Part], memoryThreshold: Int = defaultMemoryThreshold) {
        self.boundary = boundary ?? Self.randomBoundary()
        boundaryIsChosen = boundary != nil
        self.parts = parts
        self.memoryThreshold = memoryThreshold
    }

    /// The `Content-Type` header value, with the boundary (quoted when it has a character that
    /// needs it, such as a space: the value a request of the form is sent with).
    public var contentType: String { MultipartEncoder.contentType(self) }

    /// The encoded body, exactly as it is sent (same boundary, same bytes), for a plugin that signs
    /// or hashes it. Files and streams are read off Swift's thread pool; stream parts are opened
    /// anew. With the target's ``TargetType/requestCompression``, what is sent is this body
    /// compressed (in the request's `httpBody` when it is small enough to be built in memory).
    ///
    /// ```swift
    /// if case .uploadMultipart(let form, _) = context.target.task {
    ///     let body = try await form.encodedBody(maxBytes: 5_000_000)
    ///     request.setValue(signature(of: body), forHTTPHeaderField: "X-Signature")
    /// }
    /// ```
    /// - Parameter maxBytes: The largest body to build in memory. Default: ``memoryThreshold``.
    /// - Returns: The body.
    /// - Throws: ``CourierError/multipartEncoding(_:)`` with ``MultipartFailure/bodyTooLarge(length:limit:)``
    ///   when the body is longer than `maxBytes` (nothing is read then), or with the failure that
    ///   stopped it (an unreadable file, a stream of the wrong length); ``CourierError/cancelled``
    ///   when the task is cancelled.
    public func encodedBody(maxBytes: Int? = nil) async throws(CourierError) -> Data {
        let limit = max(0, maxBytes ?? memoryThreshold)
        let length = try MultipartEncoder.totalLength(self)
        guard length <= UInt64(limit) else {
            throw .multipartEncoding(MultipartFailure.bodyTooLarge(length: length, limit: limit))
        }
        if MultipartEncoder.isInMemory(self) { return try MultipartEncoder.encodeInMemory(self, length: length) }
        do {
            return try await MultipartEncoder.encodeInMemoryOffPool(self, length: length)
        } catch let error as CourierError {
            throw error
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .multipartEncoding(error)
        }
    }

    static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let hex = (0..<4).map { _ in String(generator.next() as UInt32, radix: 16) }.joined()
        return "courier.boundary.\(hex)"
    }
}

extension MultipartFormData {
    /// One part of a form.
    public struct Part: Sendable, Hashable {
        /// Where a part's bytes come from.
        public enum Content: Sendable, Hashable {
            /// Bytes in memory.
            case data(Data)
            /// A file, read when the body is built.
            case file(URL)
            /// A stream of exactly `length` bytes, opened when the body is built.
            case stream(StreamSource, length: UInt64)
        }

        /// The form field name.
        public var name: String
        /// The content.
        public var content: Content
        /// The file name sent in `Content-Disposition`, if any.
        public var fileName: String?
        /// The part's `Content-Type`, if any.
        public var mimeType: String?

        /// A part with bytes in memory (a plain field when there is no file name or MIME type).
        /// - Parameters:
        ///   - name: The form field name.
        ///   - data: The bytes.
        ///   - fileName: A file name to send. Default: none.
        ///   - mimeType: A content type. Default: inferred from `fileName`'s extension when there is
        ///     one, otherwise none.
        public init(name: String, data: Data, fileName: String? = nil, mimeType: String? = nil) {
            self.name = name
            self.content = .data(data)
            self.fileName = fileName
            self.mimeType = mimeType ?? fileName.map(MIMEType.forFileName)
        }

        /// A part read from a file.
        /// - Parameters:
        ///   - name: The form field name.
        ///   - fileURL: The file.
        ///   - fileName: The file name to send. Default: the file's own name.
        ///   - mimeType: The content type. Default: inferred from the file's extension
        ///     (`application/octet-stream` when unknown).
        public init(name: String, fileURL: URL, fileName: String? = nil, mimeType: String? = nil) {
            self.name = name
            self.content = .file(fileURL)
            self.fileName = fileName ?? fileURL.lastPathComponent
            self.mimeType = mimeType ?? MIMEType.forFileName(fileName ?? fileURL.lastPathComponent)
        }

        /// A part read from a stream of known length.
        /// - Parameters:
        ///   - name: The form field name.
        ///   - stream: Makes a new stream each time the body is built (a retry builds it again).
        ///   - length: The exact number of bytes the stream yields.
        ///   - fileName: A file name to send. Default: none.
        ///   - mimeType: The content type. Default: inferred from `fileName`, else
        ///     `application/octet-stream`.
        public init(
            name: String, stream: @escaping @Sendable () -> InputStream?, length: UInt64,
            fileName: String? = nil, mimeType: String? = nil
        ) {
            self.name = name
            self.content = .stream(StreamSource(stream), length: length)
            self.fileName = fileName
            self.mimeType = mimeType ?? MIMEType.forFileName(fileName ?? "")
        }
    }

    /// Makes the input stream of a stream part. Two sources are equal only if they are the same
    /// source (streams cannot be compared by content).
    public struct StreamSource: Sendable, Hashable {
        private let id = UUID()
        let make: @Sendable () -> InputStream?

        /// Wraps a function that opens a new stream each time it is called.
        /// - Parameter make: Opens the stream.
        public init(_ make: @escaping @Sendable () -> InputStream?) {
            self.make = make
        }

        public static func == (lhs: StreamSource, rhs: StreamSource) -> Bool { lhs.id == rhs.id }
        public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    }
}

/// Why a multipart body could not be built. Wrapped in ``CourierError/multipartEncoding(_:)``.
public enum MultipartFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The form has no parts.
    case noParts
    /// The boundary is empty, too long, uses characters RFC 2046 does not allow, or appears in a
    /// part that is in memory.
    case invalidBoundary(String)
    /// A file part's file cannot be read.
    case unreadableFile(URL, reason: String)
    /// A stream part could not be opened, or ended before or after its declared length.
    case streamLengthMismatch(name: String, expected: UInt64, actual: UInt64)
    /// The temporary file for a large body could not be written.
    case temporaryFile(reason: String)
    /// A file part changed size after the request announced its `Content-Length` (`expected`),
    /// so the body built (`actual` bytes) no longer matches it.
    case sizeChanged(expected: UInt64, actual: UInt64)
    /// The body (`length` bytes) is longer than the `limit` ``MultipartFormData/encodedBody(maxBytes:)``
    /// was given.
    case bodyTooLarge(length: UInt64, limit: Int)
    /// With part `name`, the parts' lengths add up to more than `Int64.max` bytes, which no
    /// `Content-Length` can say (a stream part declared with a length of `UInt64.max` for
    /// "unknown" does this: give its real length).
    case tooLong(name: String)

    public var description: String {
        switch self {
        case .noParts: "the multipart form has no parts"
        case .invalidBoundary(let boundary): "'\(boundary)' is not a valid multipart boundary"
        case .unreadableFile(let url, let reason): "cannot read \(url.path): \(reason)"
        case .streamLengthMismatch(let name, let expected, let actual):
            "the stream of part '\(name)' gave \(actual) bytes, not the declared \(expected)"
        case .temporaryFile(let reason): "cannot write the temporary body file: \(reason)"
        case .sizeChanged(let expected, let actual):
            "a part changed size after the request was built (\(expected) bytes announced, \(actual) built)"
        case .bodyTooLarge(let length, let limit):
            "the multipart body is \(length) bytes, more than the \(limit) allowed in memory"
        case .tooLong(let name):
            "with part '\(name)', the multipart body is longer than a Content-Length can say (Int64.max bytes)"
        }
    }
}
