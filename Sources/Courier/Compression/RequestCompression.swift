/// How a target's request bodies are compressed before they are sent (`Content-Encoding`).
///
/// Off unless a target opts in with ``TargetType/requestCompression``:
///
/// ```swift
/// var requestCompression: RequestCompression? { .gzip }
/// ```
///
/// A body of at least ``minimumBytes`` is compressed once per call, before plugins'
/// `prepare`, so a signing plugin signs the bytes that are sent and every retry re-sends those
/// same bytes; `Content-Encoding` and `Content-Length` describe them. A body in memory is
/// compressed in memory; a file or multipart body is compressed while it streams into a temporary
/// file (memory bounded by one chunk, whatever the size), removed when the call ends. A request
/// whose headers already name a `Content-Encoding` is refused with
/// ``CourierError/requestCompression(_:)`` (``RequestCompressionFailure/alreadyEncoded(_:)``):
/// its body is already encoded, or says it is, and encoding it again would send something the
/// server cannot read.
///
/// Only send compressed bodies to servers that accept them: HTTP has no way for a server to
/// announce it, and one that does not answers `415 Unsupported Media Type`, or worse, reads the
/// compressed bytes as they are.
public struct RequestCompression: Sendable, Hashable {
    /// The content coding.
    public enum Coding: String, Sendable, Hashable, CaseIterable {
        /// `Content-Encoding: gzip` (RFC 1952).
        case gzip
        /// `Content-Encoding: deflate`: a zlib stream (RFC 1950), as HTTP defines it (RFC 9110
        /// §8.4.1.2), not raw DEFLATE.
        case deflate
    }

    /// The default for ``minimumBytes``: 1,024 bytes. Smaller bodies rarely shrink by more than
    /// the coding's framing (18 bytes for gzip, 6 for deflate) and a few packets' worth of CPU.
    public static let defaultMinimumBytes = 1_024

    /// The content coding.
    public var coding: Coding
    /// Bodies shorter than this are sent as they are, without `Content-Encoding`. Negative values
    /// count as `0`. Default: ``defaultMinimumBytes`` (1,024).
    public var minimumBytes: Int

    /// Creates a compression setting.
    /// - Parameters:
    ///   - coding: The content coding.
    ///   - minimumBytes: Bodies shorter than this are sent as they are. Default:
    ///     ``defaultMinimumBytes`` (1,024).
    public init(_ coding: Coding, minimumBytes: Int = RequestCompression.defaultMinimumBytes) {
        self.coding = coding
        self.minimumBytes = max(0, minimumBytes)
    }

    /// gzip, for bodies of at least ``defaultMinimumBytes``.
    public static let gzip = RequestCompression(.gzip)
    /// deflate (zlib), for bodies of at least ``defaultMinimumBytes``.
    public static let deflate = RequestCompression(.deflate)

    /// Whether a body of `length` bytes is compressed.
    func applies(toLength length: UInt64) -> Bool {
        // Read through `max`: the property can be set below zero after `init` clamped it.
        length >= UInt64(max(0, minimumBytes))
    }
}

extension TargetType {
    // compressed uploads
    public var requestCompression: RequestCompression? { nil }
}
