import CCourierZlib
import Courier
import Foundation

/// Decodes a `gzip` or `deflate` body as it arrives, in pieces of at most ``pieceSize`` bytes, so
/// the caller can count the decoded bytes against Courier's limits before the next piece is made
/// (a decompression bomb is stopped after a piece, not after it has been inflated whole).
///
/// Used by one task at a time; not `Sendable`.
final class Inflater {
    /// The largest piece of decoded bytes handed over at once.
    static let pieceSize = 64 << 10

    private let stream: UnsafeMutablePointer<z_stream>
    private var initialized = false
    /// `deflate` bodies are zlib-wrapped by the standard, raw by some servers: the first failure
    /// on a body's first bytes retries them as raw deflate.
    private var mayRetryRaw: Bool
    /// The first bytes of a `deflate` body, kept to be decoded again as raw deflate: zlib refuses
    /// a raw stream within its first two bytes (the zlib header it expects), which may have come
    /// in an earlier call.
    private var firstBytes = Data()
    private var producedAny = false
    /// `gzip` only: a body is a series of members (RFC 1952 §2.2). After a member's end the
    /// stream is reset; bytes that start with gzip's magic number (1F 8B) are another member,
    /// anything else is after the body (padding, garbage) and ignored.
    private let isGzip: Bool

    /// Where the body is.
    private enum State {
        /// No compressed byte has arrived: a body that never starts (the answer to `HEAD`, a 204
        /// or 304 naming an encoding) is empty, not cut short.
        case notStarted
        /// Inside the compressed stream (a `gzip` member).
        case inMember
        /// `gzip`: a member has ended; `magicSeen` bytes of the next one's magic number (0 or 1:
        /// it may arrive split) have been seen. With none seen, the body may end here.
        case betweenMembers(magicSeen: Int)
        /// The compressed stream has ended; whatever follows is ignored.
        case done
        /// Bytes that follow the compressed stream have arrived (padding, garbage): ignored, as
        /// whatever comes after them.
        case pastTheEnd
    }

    private var state = State.notStarted

    /// Whether any compressed byte has arrived.
    var started: Bool {
        if case .notStarted = state { return false }
        return true
    }

    /// Whether the body may end here: its compressed stream (its last `gzip` member) is complete.
    var ended: Bool {
        switch state {
        case .notStarted, .inMember, .betweenMembers(magicSeen: 1...): false
        case .betweenMembers, .done, .pastTheEnd: true
        }
    }

    /// Whether bytes that follow the compressed stream have arrived: the body is complete, and
    /// nothing more of it is worth reading (a server may send such bytes without end, and they
    /// decode to nothing, so no limit on decoded bytes would stop them).
    var isPastTheEnd: Bool {
        if case .pastTheEnd = state { return true }
        return false
    }

    /// Where pieces are inflated; reused (a piece kept by the caller is copied on the next write).
    /// Made after the encoding is known: a body that is not compressed allocates nothing.
    private var output: Data

    /// A body encoded more than once (`gzip, gzip`): refused at its first byte. Undoing each
    /// coding in turn would gather, from one network read, what every stage makes of it: each
    /// stage multiplies by up to ~1,000, so a few kilobytes encoded twice are gigabytes in memory
    /// before a limit is counted.
    private let refusesStacked: Bool

    /// An inflater for a body with this `Content-Encoding`, or `nil` when it is not one Courier
    /// decodes (`identity`, absent, or unknown: handed over as it came, as URLSession does).
    /// The value is a list of codings in the order they were applied, read by Courier's
    /// `ContentCoding.list(_:)` (RFC 9110 §8.4; repeated fields are joined into one), which leaves
    /// `identity` and empty members out; a coding Courier does not decode hands the body over. A body with more
    /// than one `gzip` or `deflate` coding fails with `URLError(.cannotDecodeContentData)` once
    /// a byte of it arrives (an answer without a body is complete).
    init?(contentEncoding: String?) {
        let codings = ContentCoding.list(contentEncoding)
        var windowBits: Int32 = 0
        for coding in codings {
            switch coding {
            case .gzip: windowBits = 15 + 16
            case .deflate: windowBits = 15
            case .other: return nil
            }
        }
        guard !codings.isEmpty else { return nil }
        // Made before any stored property is set: a failure here leaves nothing for `deinit`.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard courier_inflate_init(stream, windowBits) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
        self.stream = stream
        refusesStacked = codings.count > 1
        mayRetryRaw = windowBits == 15
        isGzip = windowBits != 15
        output = Data(count: Self.pieceSize)
        initialized = true
    }

    deinit {
        if initialized { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decodes `input`, handing each decoded piece to `piece` in order. Every member of a `gzip`
    /// body is decoded; bytes after the end of the compressed stream that start no member are
    /// ignored.
    /// - Throws: `URLError(.cannotDecodeContentData)` for a body that is not valid, or what `piece`
    ///   throws.
    func decode(_ input: UnsafeRawBufferPointer, _ piece: (Data) throws -> Void) throws {
        guard let base = input.baseAddress, !input.isEmpty else { return }
        switch state {
        case .done, .pastTheEnd:
            state = .pastTheEnd
            return
        case .notStarted: state = .inMember
        case .inMember, .betweenMembers: break
        }
        if refusesStacked { throw URLError(.cannotDecodeContentData) }
        if mayRetryRaw {
            if firstBytes.count + input.count > 16 {
                mayRetryRaw = firstBytes.count < 2
            }
            if mayRetryRaw { firstBytes.append(contentsOf: input) }
        }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        while stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0 {
            if case .betweenMembers(let magicSeen) = state, stream.pointee.avail_in > 0,
                !nextBytesStartAMember(magicSeen: magicSeen)
            {
                // The body ended with the last member (a first byte of the magic number that
                // came alone is no member after all).
                return
            }
            let (status, produced) = output.withUnsafeMutableBytes { buffer -> (Int32, Int) in
                stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(buffer.count)
                let status = inflate(stream, Z_NO_FLUSH)
                return (status, buffer.count - Int(stream.pointee.avail_out))
            }
            if status == Z_DATA_ERROR, mayRetryRaw, !producedAny {
                // Raw deflate after all: start again from the body's first byte.
                mayRetryRaw = false
                inflateEnd(stream)
                initialized = false
                stream.pointee = z_stream()
                guard courier_inflate_init(stream, -15) == Z_OK else { throw URLError(.cannotDecodeContentData) }
                initialized = true
                let again = firstBytes
                firstBytes = Data()
                try again.withUnsafeBytes { try decode($0, piece) }
                return
            }
            guard status == Z_OK || status == Z_STREAM_END || (status == Z_BUF_ERROR && produced == 0) else {
                throw URLError(.cannotDecodeContentData)
            }
            if produced > 0 {
                producedAny = true
                mayRetryRaw = false
                firstBytes = Data()
                try piece(output.prefix(produced))
            }
            if status == Z_STREAM_END {
                guard isGzip, inflateReset(stream) == Z_OK else {
                    state = stream.pointee.avail_in > 0 ? .pastTheEnd : .done
                    return
                }
                state = .betweenMembers(magicSeen: 0)
                if stream.pointee.avail_in == 0 { return }
                continue
            }
            if status == Z_BUF_ERROR { return }
            if produced < Self.pieceSize, stream.pointee.avail_in == 0 { return }
        }
    }

    /// After a member's end: whether the input still to decode starts another member, read
    /// without consuming it (zlib reads the member's header). Its first byte of the magic number
    /// means the body has not ended; both, that the member is zlib's to decode (and to refuse if
    /// it is corrupt). Anything else ends the body.
    private func nextBytesStartAMember(magicSeen: Int) -> Bool {
        guard let next = stream.pointee.next_in else {
            state = .pastTheEnd
            return false
        }
        var seen = magicSeen
        var index = 0
        while index < Int(stream.pointee.avail_in), seen < 2 {
            guard next[index] == (seen == 0 ? 0x1F : 0x8B) else {
                state = .pastTheEnd
                return false
            }
            seen += 1
            index += 1
        }
        state = seen == 2 ? .inMember : .betweenMembers(magicSeen: seen)
        return true
    }
}
