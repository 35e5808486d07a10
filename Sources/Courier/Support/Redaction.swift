import Foundation

/// Keeps secrets out of text Courier prints: user info in URLs, and the values of query items
/// whose names say they are secret.
package enum Redaction {
    package static let placeholder = "<redacted>"

    /// Query item names redacted by default (compared without regard to case).
    package static let defaultSecretQueryItems: Set<String> = [
        "token", "access_token", "refresh_token", "id_token", "api_key", "apikey", "key", "password",
        "passwd", "secret", "client_secret", "signature", "sig", "auth", "session", "code",
    ]

    /// The URL as text with its user info and secret query values replaced by `<redacted>`.
    /// - Parameters:
    ///   - url: The URL.
    ///   - secretQueryItems: Lower-cased names of query items whose values are secret.
    static func url(_ url: URL, secretQueryItems: Set<String> = defaultSecretQueryItems) -> String {
        string(url.absoluteString, secretQueryItems: secretQueryItems)
    }

    /// As ``url(_:secretQueryItems:)``, for a URL held as text (it need not parse).
    package static func string(_ text: String, secretQueryItems: Set<String> = defaultSecretQueryItems) -> String {
        var text = Substring(text)
        var fragment: Substring = ""
        if let hash = text.firstIndex(of: "#") {
            fragment = text[hash...]
            text = text[..<hash]
        }
        var query: Substring?
        if let mark = text.firstIndex(of: "?") {
            query = text[text.index(after: mark)...]
            text = text[..<mark]
        }
        var result = redactingUserInfo(text)
        if let query {
            result += "?"
            result += query.split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
                let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                let decoded = (String(name).removingPercentEncoding ?? String(name)).lowercased()
                guard item.contains("="), secretQueryItems.contains(decoded) else { return String(item) }
                return "\(name)=\(placeholder)"
            }.joined(separator: "&")
        }
        return result + fragment
    }

    /// `scheme://user:secret@host/…` becomes `scheme://<redacted>@host/…`.
    private static func redactingUserInfo(_ text: Substring) -> String {
        guard let schemeEnd = text.range(of: "://") else { return String(text) }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = text[authorityStart...].firstIndex(of: "/") ?? text.endIndex
        let authority = text[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return String(text) }
        return String(text[..<authorityStart]) + placeholder + String(text[at...])
    }
}
