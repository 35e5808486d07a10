import Courier
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// A refused server certificate as ``Courier/CourierError/serverTrust(host:reason:underlying:)``.
///
/// AsyncHTTPClient reports a refused chain as BoringSSL's `CERTIFICATE_VERIFY_FAILED`, without
/// saying why (its configuration offers no verification callback that would). So the transport
/// asks once more: a handshake of its own with the same host and port, which records the
/// certificate the server presents and sends nothing else (no request), and reads the reason off
/// it: its dates, whether it signed itself, otherwise an authority that is not trusted.
enum ServerTrust {
    /// The typed refusal for `error`, or `nil` when `error` is not about the server's certificate.
    static func refusal(_ error: any Error, url: URL?) async -> CourierError? {
        guard let url, url.scheme?.lowercased() == "https", let host = url.host else { return nil }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return .serverTrust(host: host, reason: .hostnameMismatch, underlying: error)
        }
        guard case NIOSSLError.handshakeFailed(let failure) = error, case .sslError(let stack) = failure,
            stack.contains(where: { $0.description.contains("CERTIFICATE_VERIFY_FAILED") })
        else { return nil }
        let reason = await diagnose(host: host, port: url.port ?? 443)
        return .serverTrust(host: host, reason: reason, underlying: error)
    }

    /// Why the certificate `host:port` presents would be refused, read off the certificate.
    /// `.other` when it cannot be read within `timeout`, or when the calling task is cancelled
    /// (at once: found by review, a cancel waited for the handshake or its 10 s bound).
    static func diagnose(host: String, port: Int, timeout: TimeAmount = .seconds(10)) async -> ServerTrustReason {
        guard let leaf = await presentedCertificate(host: host, port: port, timeout: timeout) else { return .other }
        return reason(for: leaf, now: time(nil))
    }

    /// The reason for a certificate whose chain was refused: expired or not yet valid, then
    /// self-signed (issuer and subject the same), otherwise an unknown authority.
    static func reason(for leaf: NIOSSLCertificate, now: time_t) -> ServerTrustReason {
        if now > leaf.notValidAfter { return .expired }
        if now < leaf.notValidBefore { return .notYetValid }
        if let der = try? leaf.toDERBytes(), let names = issuerAndSubject(der: der[...]), names.issuer == names.subject
        {
            return .selfSigned
        }
        return .untrustedIssuer
    }

    /// One handshake that keeps the server's leaf certificate and then fails on purpose, so the
    /// connection closes before anything is sent. At most `timeout`, and no longer than the
    /// calling task is not cancelled.
    private static func presentedCertificate(
        host: String, port: Int, timeout limit: TimeAmount
    ) async -> NIOSSLCertificate? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .noHostnameVerification
        guard let context = try? NIOSSLContext(configuration: configuration) else { return nil }
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let presented = eventLoop.makePromise(of: NIOSSLCertificate?.self)
        // The first answer wins: NIO ignores a promise completed again.
        let settle: @Sendable (NIOSSLCertificate?) -> Void = { leaf in presented.succeed(leaf) }
        let serverName = IPAddressCheck.isAddress(host) ? nil : host
        let connection = ClientBootstrap(group: eventLoop)
            .connectTimeout(limit)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName) {
                        chain, verdict in
                        settle(chain.first)
                        verdict.succeed(NIOSSLVerificationResult.failed)
                    }
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .connect(host: host, port: port)
        connection.whenFailure { _ in settle(nil) }
        let timeout = eventLoop.scheduleTask(in: limit) { settle(nil) }
        let leaf = await withTaskCancellationHandler {
            try? await presented.futureResult.get()
        } onCancel: {
            settle(nil)
        }
        timeout.cancel()
        // Closed as soon as it is connected, or now: a cancelled caller does not wait for that.
        connection.whenSuccess { channel in channel.close(promise: nil) }
        return leaf ?? nil
    }

    /// The DER bytes of a certificate's issuer and subject names (RFC 5280 §4.1: the first,
    /// SEQUENCE-tagged field of the TBSCertificate after an optional version, the serial number
    /// and the signature algorithm; then the validity; then the subject).
    static func issuerAndSubject(der: ArraySlice<UInt8>) -> (issuer: ArraySlice<UInt8>, subject: ArraySlice<UInt8>)? {
        guard let certificate = DER.elements(of: der).first, let tbs = DER.elements(of: certificate.content).first
        else { return nil }
        var fields = DER.elements(of: tbs.content)
        if fields.first?.tag == 0xA0 { fields.removeFirst() }
        // serialNumber, signature, issuer, validity, subject.
        guard fields.count >= 5 else { return nil }
        return (fields[2].whole, fields[4].whole)
    }
}

/// The little DER reading ``ServerTrust`` needs: the elements of a constructed value.
enum DER {
    struct Element {
        let tag: UInt8
        let content: ArraySlice<UInt8>
        let whole: ArraySlice<UInt8>
    }

    /// The elements one after the other in `bytes`; stops at the first malformed one.
    static func elements(of bytes: ArraySlice<UInt8>) -> [Element] {
        var elements: [Element] = []
        var index = bytes.startIndex
        while index < bytes.endIndex, elements.count < 64 {
            let start = index
            let tag = bytes[index]
            index += 1
            guard index < bytes.endIndex else { break }
            var length = Int(bytes[index])
            index += 1
            if length & 0x80 != 0 {
                let count = length & 0x7F
                guard count > 0, count <= 4, bytes.endIndex - index >= count else { break }
                length = 0
                for byte in bytes[index..<index + count] { length = length << 8 | Int(byte) }
                index += count
            }
            guard length >= 0, bytes.endIndex - index >= length else { break }
            elements.append(
                Element(tag: tag, content: bytes[index..<index + length], whole: bytes[start..<index + length]))
            index += length
        }
        return elements
    }
}

/// Whether a host is an IP address literal (no SNI for those, RFC 6066 §3).
enum IPAddressCheck {
    static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return inet_pton(AF_INET, bare, &v4) == 1 || inet_pton(AF_INET6, bare, &v6) == 1
    }
}
