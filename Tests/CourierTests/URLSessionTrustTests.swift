import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking

    /// URLSessionTransport on Linux refuses, when it is made, every trust setting FoundationNetworking
    /// cannot enforce, and names the alternative.
    @Suite struct URLSessionTrustTests {
        // Computed: LeakSanitizer reports a global's `Data` as leaked at exit.
        private static var ca: TrustCertificate { .pem(Data(TrustFixtures.caPEM.utf8)) }

        private static func refusal(_ policies: TrustPolicies) -> TrustConfigurationError? {
            do {
                _ = try URLSessionTransport(trust: policies)
                return nil
            } catch {
                return error
            }
        }

        @Test(arguments: [
            (TrustPolicy(roots: .adding([ca])), TrustConfigurationError.Setting.roots, "AsyncHTTPClientTransport"),
            (TrustPolicy(roots: .only([ca])), .roots, "AsyncHTTPClientTransport"),
            (TrustPolicy(pins: [.publicKey(sha256: TrustFixtures.leafKeySHA256)]), .pins, "Apple platforms"),
            (TrustPolicy(pins: [.certificate(ca)]), .pins, "roots: .only"),
            (TrustPolicy(evaluator: { _ in }), .evaluator, "Apple platforms"),
            (
                TrustPolicy(clientIdentity: .pkcs12(Data([1]), password: "x")), .clientIdentity,
                "AsyncHTTPClientTransport"
            ),
            (
                TrustPolicy(clientIdentity: .pem(certificateChain: Data(), privateKey: Data())), .clientIdentity,
                "mutual TLS"
            ),
        ])
        func unsupportedSettingsAreRefusedAtConstruction(
            policy: TrustPolicy, setting: TrustConfigurationError.Setting, alternative: String
        ) throws {
            let asDefault = try #require(Self.refusal(TrustPolicies(default: policy)))
            #expect(asDefault.setting == setting)
            #expect(asDefault.problem == .unsupported)
            #expect(asDefault.host == nil)
            #expect(asDefault.description.contains(alternative))
            let forHost = try #require(Self.refusal(TrustPolicies(hosts: ["api.example.com": policy])))
            #expect(forHost.setting == setting)
            #expect(forHost.host == "api.example.com")
            #expect(forHost.description.contains("api.example.com"))
        }

        @Test func theSystemPolicyIsAccepted() throws {
            _ = try URLSessionTransport(trust: .system)
            _ = try URLSessionTransport(trust: TrustPolicies(hosts: ["api.example.com": .system]))
        }

        /// The fact the client-identity refusal rests on: FoundationNetworking presents no client
        /// certificate, so a server that requires one (nginx answers 400) never gets one.
        @Test(
            .enabled(
                if: ProcessInfo.processInfo.environment["COURIER_TLS_SYSTEM_TRUST"] != nil,
                "needs scripts/test's TLS servers with the test CA in the system bundle"))
        func foundationNetworkingPresentsNoClientCertificate() async throws {
            let base = try #require(ProcessInfo.processInfo.environment["COURIER_TLS_MTLS_URL"])
            let url = try #require(URL(string: base + "/small.json"))
            let response = try await URLSessionTransport().send(URLRequest(url: url))
            #expect(response.statusCode == 400)
        }

        @Test func malformedValuesAreInvalidNotUnsupported() {
            let error = Self.refusal(TrustPolicies(default: TrustPolicy(pins: [.publicKey(sha256: "short")])))
            #expect(error?.problem == .invalid)
            #expect(error?.setting == .pins)
        }
    }
#endif
