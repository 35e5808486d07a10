import Foundation

/// The file format of ``DiskCacheStorage``: a magic tag, the lengths, the head as JSON, the body,
/// and a 64-bit FNV-1a checksum of head and body. A file that is short, long, altered or not for
/// the key it was read for decodes to `nil`.
enum CacheEntryCodec {
    private static let magic = Data("CRCACHE1".utf8)
    static let prefixLength = 8 + 4 + 8
    private static let checksumLength = 8

    private struct Head: Codable {
        var url: String
        var status: Int
        var headers: [String: String]
        var requestTime: Double
        var responseTime: Double
        var vary: [String: String]
    }

    /// The largest file read back for these limits: anything larger is not a file Courier wrote.
    /// Saturating: limits near `Int.max` (a caller's "no limit") give `Int.max`, not an overflow
    /// trap; negative ones count as 0.
    static func maxFileSize(_ limits: CacheLimits) -> Int {
        // JSON may escape a header byte into up to six.
        let (head, headOverflow) = max(0, limits.maxHeaderBytes).multipliedReportingOverflow(by: 6)
        let (withHead, sumOverflow) = head.addingReportingOverflow(prefixLength + 4 * 1_024 + checksumLength)
        let (total, totalOverflow) = withHead.addingReportingOverflow(max(0, limits.maxEntryBytes))
        return headOverflow || sumOverflow || totalOverflow ? Int.max : total
    }

    static func encode(_ response: CachedResponse) -> Data? {
        guard let parts = encodeParts(response) else { return nil }
        var data = Data(capacity: parts.reduce(0) { $0 + $1.count })
        for part in parts { data.append(part) }
        return data
    }

    /// The file in three parts (prefix and head, body, checksum), written one after the other: the
    /// body is not copied into a buffer of its own (a 4 MiB entry does not cost another 4 MiB).
    static func encodeParts(_ response: CachedResponse) -> [Data]? {
        let head = Head(
            url: response.url.absoluteString, status: response.statusCode, headers: response.headers,
            requestTime: response.requestTime.timeIntervalSince1970,
            responseTime: response.responseTime.timeIntervalSince1970, vary: response.varyDigests)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let json = try? encoder.encode(head), json.count <= Int(UInt32.max) else { return nil }
        var prefix = Data(capacity: prefixLength + json.count)
        prefix.append(magic)
        append(UInt64(json.count), bytes: 4, to: &prefix)
        append(UInt64(response.body.count), bytes: 8, to: &prefix)
        prefix.append(json)
        var trailer = Data(capacity: checksumLength)
        append(fnv1a(response.body, seed: fnv1a(json)), bytes: 8, to: &trailer)
        return [prefix, response.body, trailer]
    }

    /// The head and body lengths a file's first ``prefixLength`` bytes announce, or `nil` when they
    /// do not start a file of `size` bytes that Courier wrote.
    static func lengths(prefix: Data, size: Int) -> (head: Int, body: Int)? {
        let prefix = Data(prefix)  // indices from zero
        guard prefix.count == prefixLength, size >= prefixLength + checksumLength, prefix.prefix(magic.count) == magic
        else { return nil }
        let headLength = read(prefix, at: 8, bytes: 4)
        let bodyLength = read(prefix, at: 12, bytes: 8)
        let available = UInt64(size - prefixLength - checksumLength)
        guard headLength <= available, bodyLength <= available, headLength + bodyLength == available else {
            return nil
        }
        return (Int(headLength), Int(bodyLength))
    }

    /// Decodes a file read in parts (``lengths(prefix:size:)`` gave the lengths): the body is kept
    /// as it was read, not copied.
    static func decode(json: Data, body: Data, checksum: Data, key: String) -> CachedResponse? {
        guard checksum.count == checksumLength, fnv1a(body, seed: fnv1a(json)) == read(Data(checksum), at: 0, bytes: 8),
            let head = try? JSONDecoder().decode(Head.self, from: json), let url = URL(string: head.url),
            CacheRules.key(for: url) == key, head.requestTime.isFinite, head.responseTime.isFinite
        else { return nil }
        return CachedResponse(
            url: url, statusCode: head.status, headers: head.headers, body: body,
            requestTime: Date(timeIntervalSince1970: head.requestTime),
            responseTime: Date(timeIntervalSince1970: head.responseTime), varyDigests: head.vary)
    }

    private static func append(_ value: UInt64, bytes: Int, to data: inout Data) {
        for index in (0..<bytes).reversed() { data.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    private static func read(_ data: Data, at offset: Int, bytes: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + bytes) { value = value << 8 | UInt64(data[index]) }
        return value
    }

    static func fnv1a(_ data: Data, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        data.withUnsafeBytes { raw in
            var hash = seed
            for byte in raw {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
            return hash
        }
    }
}
