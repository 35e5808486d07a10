import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Issue 28 (connection details): what URLSession's task metrics say about the connection.
extension TransferMetrics {
    /// Transfer metrics with the connection details of a task's last transaction (the one that
    /// brought the response), or `nil` when there is none. URLSession reports task metrics on
    /// Apple platforms; FoundationNetworking never calls the delegate method that carries them.
    /// - Parameters:
    ///   - metrics: The task's metrics.
    ///   - bytesSent: The request body's size.
    ///   - bytesReceived: The response body's size.
    ///   - redirects: Redirects followed.
    init?(_ metrics: URLSessionTaskMetrics, bytesSent: Int64, bytesReceived: Int64, redirects: Int) {
        guard let transaction = metrics.transactionMetrics.last(where: { $0.response != nil }) else { return nil }
        self.init(
            bytesSent: bytesSent, bytesReceived: bytesReceived, redirects: redirects,
            httpVersion: transaction.networkProtocolName.flatMap(Self.httpVersion(protocolName:)),
            connectionReused: transaction.isReusedConnection, remoteAddress: transaction.remoteAddress,
            domainLookup: Self.duration(from: transaction.domainLookupStartDate, to: transaction.domainLookupEndDate),
            connect: Self.duration(from: transaction.connectStartDate, to: transaction.connectEndDate),
            secureConnection: Self.duration(
                from: transaction.secureConnectionStartDate, to: transaction.secureConnectionEndDate))
    }

    /// The time between two dates of a transaction; `nil` unless both are there and in order.
    static func duration(from start: Date?, to end: Date?) -> Duration? {
        guard let start, let end, end >= start else { return nil }
        return .nanoseconds(Int64((end.timeIntervalSince(start) * 1e9).rounded()))
    }

    /// ALPN's protocol name as ``Response/httpVersion`` spells it: `h2` is `HTTP/2`, `h3` is
    /// `HTTP/3`, `http/1.1` is `HTTP/1.1`; `nil` for anything else.
    static func httpVersion(protocolName: String) -> String? {
        switch protocolName.lowercased() {
        case "h2": "HTTP/2"
        case "h3": "HTTP/3"
        case "http/1.1": "HTTP/1.1"
        case "http/1.0": "HTTP/1.0"
        default: nil
        }
    }
}
