import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import Foundation
import NIOSSL
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Trust policies on AsyncHTTPClientTransport: what it refuses when made (no server needed).
@Suite struct TrustConfigurationTests {
    private static func refusal(_ policies: TrustPolicies) -> TrustConfigurationError? {
        do {
            _ = try AsyncHTTPClientTransport(trust: policies)
            return nil
        } catch {
            return error
        }
    }

    @Test func pinsAreRefusedWithTheHostAndTheAlternative() throws {
        let pin = TrustPolicy(pins: [.publicKey(sha256: Data(repeating: 1, count: 32).base64EncodedString())])
        let error = try #require(Self.refusal(TrustPolicies(hosts: ["api.example.com": pin])))
        #expect(error.setting == .pins)
        #expect(error.problem == .unsupported)
        #expect(error.host == "api.example.com")
        #expect(error.description.contains("roots: .only"))
        #expect(Self.refusal(TrustPolicies(default: pin))?.host == nil)
    }

    @Test func evaluatorsAreRefused() {
        let error = Self.refusal(TrustPolicies(default: TrustPolicy(evaluator: { _ in })))
        #expect(error?.setting == .evaluator)
        #expect(error?.problem == .unsupported)
    }

    @Test func unreadableIdentitiesAreInvalid() {
        let pem = Self.refusal(
            TrustPolicies(
                hosts: [
                    "mtls.example.com": TrustPolicy(
                        clientIdentity: .pem(certificateChain: Data("x".utf8), privateKey: Data("y".utf8)))
                ]))
        #expect(pem?.setting == .clientIdentity)
        #expect(pem?.problem == .invalid)
        #expect(pem?.host == "mtls.example.com")
        let p12 = Self.refusal(
            TrustPolicies(default: TrustPolicy(clientIdentity: .pkcs12(Data([1, 2]), password: "pw"))))
        #expect(p12?.setting == .clientIdentity)
        #expect(p12?.description.contains("pw") == false)
    }

    @Test func theSystemPolicyChangesNothing() throws {
        _ = try AsyncHTTPClientTransport(trust: .system)
        _ = try AsyncHTTPClientTransport(trust: TrustPolicies(hosts: ["api.example.com": .system]))
    }

    @Test func aWrongPKCS12PasswordIsInvalid() throws {
        let servers = try #require(TLSServers.fromEnvironment)
        let error = Self.refusal(
            TrustPolicies(default: TrustPolicy(clientIdentity: .pkcs12(servers.clientP12, password: "not it"))))
        #expect(error?.setting == .clientIdentity)
        #expect(error?.problem == .invalid)
        #expect(error?.description.contains("not it") == false)
    }
}
