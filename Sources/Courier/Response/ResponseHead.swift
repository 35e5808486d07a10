import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response head as a transport read it off the wire, whose `HTTPURLResponse` is built the first
/// time it is asked for (by `Response`, which keeps the built one: see its `Storage`). On Linux,
/// FoundationNetworking's `HTTPURLResponse` initializer canonicalizes every header name and costs
/// tens of microseconds (about 10% of a small request on AsyncHTTPClient); most requests never read
/// it, and status and header lookups do not need it.
///
/// A value, stored inline in the response's storage (issue 29: as a class of its own it was one
/// more allocation for every response, stubbed or not).
struct LazyHTTPResponse: Sendable {
    let url: URL
    let statusCode: Int
    let httpVersion: String
    /// Name and value, in the order received; repeated names joined with ", " under their first
    /// spelling, as URLSession does. When no name repeats (almost every head), this is the array
    /// the transport passed, shared rather than copied (issue 29: a second array of the same
    /// strings was an allocation and two reference counts a field for every response).
    let fields: [(String, String)]
    #if !os(Linux)
        // `Atomic` needs macOS 15 / iOS 18 (see `Locked`); on Apple platforms the response is built
        // at once, where it is cheap.
        let eager: HTTPURLResponse?
    #endif

    init(url: URL, statusCode: Int, httpVersion: String, headerFields: some Sequence<(String, String)>) {
        self.url = url
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        let fields: [(String, String)]
        // An array (what Courier's transports pass) is kept as it is when its names are distinct,
        // unless it holds far more room than fields (a buffer reserved for thousands would then
        // live as long as the response). Called from another module, this initializer is not
        // specialized: the cast is the runtime's same-type fast path.
        if let array = headerFields as? [(String, String)] {
            let keeps = array.capacity - array.count <= max(8, array.count)
            fields =
                keeps && array.withUnsafeBufferPointer(Self.namesAreDistinct)
                ? array : array.withUnsafeBufferPointer(Self.joined)
        } else {
            // Issue 29: a contiguous sequence is read through its buffer, by code specialized for it;
            // iterating a sequence this generic initializer cannot see cost AsyncHTTPClient's
            // transport 3–5 µs a response, most of it in the runtime's generic metadata lookups.
            fields =
                headerFields.withContiguousStorageIfAvailable(Self.joined)
                ?? Array(headerFields).withUnsafeBufferPointer(Self.joined)
        }
        self.fields = fields
        #if !os(Linux)
            eager = Self.build(url: url, statusCode: statusCode, httpVersion: httpVersion, fields: fields)
        #endif
    }

    /// Whether no two names are equal but for case: up to ``scannedNames`` fields, each pair
    /// compared (most differ in length, which is read first); a longer head is answered `false`, and
    /// joined through an index of names.
    private static func namesAreDistinct(_ headerFields: UnsafeBufferPointer<(String, String)>) -> Bool {
        guard headerFields.count <= scannedNames else { return false }
        for later in headerFields.indices {
            for earlier in 0..<later where ASCII.equalIgnoringCase(headerFields[earlier].0, headerFields[later].0) {
                return false
            }
        }
        return true
    }

    /// The fields of a contiguous sequence, repeated names joined.
    private static func joined(_ headerFields: UnsafeBufferPointer<(String, String)>) -> [(String, String)] {
        var fields: [(String, String)] = []
        fields.reserveCapacity(headerFields.count)
        var names: [[UInt8]: Int]?
        for (name, value) in headerFields { add(name, value, to: &fields, names: &names) }
        return fields
    }

    /// Distinct names up to which an earlier field of the same name is found by a scan. Beyond,
    /// through an index of names (lowercased bytes): a hostile head of thousands of fields, each
    /// scanned for, cost time quadratic in their count (16,000 fields: 67 s in a debug build on a
    /// loaded 2-core machine, on the cooperative pool).
    static let scannedNames = 32

    /// Adds a field, or joins its value to an earlier field of the same name with ", " (in place:
    /// thousands of repeats of one name do not copy the growing value each time).
    private static func add(
        _ name: String, _ value: String, to fields: inout [(String, String)], names: inout [[UInt8]: Int]?
    ) {
        let index: Int?
        if names == nil, fields.count < scannedNames {
            index = fields.firstIndex { ASCII.equalIgnoringCase($0.0, name) }
        } else {
            if names == nil {
                var built: [[UInt8]: Int] = [:]
                built.reserveCapacity(fields.count * 2)
                // The names so far are distinct (ignoring case): repeats were joined.
                for (offset, field) in fields.enumerated() { built[key(field.0)] = offset }
                names = built
            }
            let nameKey = key(name)
            index = names?[nameKey]
            if index == nil { names?[nameKey] = fields.count }
        }
        if let index {
            fields[index].1.append(", ")
            fields[index].1.append(value)
        } else {
            fields.append((name, value))
        }
    }

    /// A name's bytes with A–Z lowercased: equal for two names exactly when
    /// `ASCII.equalIgnoringCase` holds (bytes, not `String` equality, which would also equate
    /// canonically equivalent non-ASCII names).
    private static func key(_ name: String) -> [UInt8] {
        name.utf8.map(ASCII.lowercased)
    }

    /// The head as Foundation's `HTTPURLResponse`, built now.
    func build() -> HTTPURLResponse? {
        Self.build(url: url, statusCode: statusCode, httpVersion: httpVersion, fields: fields)
    }

    /// A header's value, its name matched without regard to (ASCII) case.
    func value(forHTTPHeaderField name: String) -> String? {
        fields.first { ASCII.equalIgnoringCase($0.0, name) }?.1
    }

    /// `Content-Length`, or -1 when absent or not a number (as `URLResponse.expectedContentLength`).
    var expectedContentLength: Int64 {
        value(forHTTPHeaderField: "Content-Length").flatMap(HeaderNumber.length) ?? -1
    }

    private static func build(
        url: URL, statusCode: Int, httpVersion: String, fields: [(String, String)]
    ) -> HTTPURLResponse? {
        var dictionary: [String: String] = [:]
        // The first field wins, as in `value(forHTTPHeaderField:)`: two names of other bytes that
        // Swift's `String` equates (canonically equivalent non-ASCII names) stay two fields above.
        for (name, value) in fields where dictionary[name] == nil { dictionary[name] = value }
        return HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: dictionary)
    }
}
