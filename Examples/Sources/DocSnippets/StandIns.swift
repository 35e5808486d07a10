// Stand-ins for the app objects the README and DocC samples assume, so the samples compile as
// written (CI builds this target).
import Courier
import Foundation

struct TokenStore: Sendable {
    func current() async throws -> String { "token" }
    func token() async throws -> String { "token" }
}

struct KeyStore: Sendable {
    func signature(for request: URLRequest) async throws -> String { "signature" }
}

struct Token: Sendable {
    var access: String
    var refresh: String
}

struct AuthClient: Sendable {
    func refresh(_ token: Token) async throws -> Token { Token(access: "new", refresh: token.refresh) }
}

struct MyLogger: Plugin {}

func sign(_ request: URLRequest) async throws -> String { "signature" }

let tokens = TokenStore()
let keychain = TokenStore()
let downloads = FileManager.default.temporaryDirectory
let photoURL = downloads.appendingPathComponent("photo.jpg")
let saved = Token(access: "a", refresh: "r")
let client = AuthClient()

struct ProgressBar {
    func update(_ fraction: Double) {}
}
let bar = ProgressBar()
