import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension SessionRouter {
    /// The body limit for one response: its size limit, and once the body passes 1 MiB (below
    /// which every body is allowed whatever its compression), the decompression ratio's.
    struct BodyLimit {
        /// Bodies up to this size pass the ratio check whatever their compression.
        static let ratioFloor: Int64 = 1 << 20

        /// The most bytes (decoded) the body may have.
        let maximum: Int64
        let failure: LimitExceeded
        let ratio: Int64
        /// For a compressed body of known size: the decoded bytes allowed. Looked up once the body
        /// passes ``ratioFloor``, so small responses never pay for the header lookup.
        private var ratioMaximum: Int64??

        init(toFile: Bool, limits: Limits) {
            maximum = toFile ? limits.maxDownloadBytes : limits.maxResponseBytes
            failure = toFile ? .downloadBody(limit: maximum) : .responseBody(limit: maximum)
            ratio = limits.maxDecompressionRatio
        }

        /// A streamed body: no total (its backlog is bounded instead), the ratio as for any body.
        init(streaming limits: Limits) {
            maximum = .max
            failure = .responseBody(limit: .max)
            ratio = limits.maxDecompressionRatio
        }

        /// The limit crossed by a body of `received` bytes so far, if any.
        mutating func crossed(by received: Int64, response: URLResponse?) -> LimitExceeded? {
            if received > maximum { return failure }
            guard received > Self.ratioFloor else { return nil }
            if ratioMaximum == nil { ratioMaximum = .some(Self.ratioMaximum(of: response, ratio: ratio)) }
            if let allowed = ratioMaximum ?? nil, received > allowed { return .decompressionRatio(limit: ratio) }
            return nil
        }

        private static func ratioMaximum(of response: URLResponse?, ratio: Int64) -> Int64? {
            guard let http = response as? HTTPURLResponse, http.expectedContentLength >= 0 else { return nil }
            let encoding = http.value(forHTTPHeaderField: "Content-Encoding")?.lowercased() ?? ""
            guard !encoding.isEmpty, encoding != "identity" else { return nil }
            let (product, overflow) = http.expectedContentLength.multipliedReportingOverflow(by: max(1, ratio))
            return max(overflow ? Int64.max : product, ratioFloor)
        }
    }
}
