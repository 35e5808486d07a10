import Foundation

/// URLs in Courier's own messages (errors, failed stubs): written with ``RedactionPolicy/default``,
/// so they hold no user info and no secret query value.
package enum Redaction {
    /// The URL as text, redacted.
    static func url(_ url: URL) -> String {
        RedactionPolicy.default.url(url.absoluteString)
    }

    /// A URL held as text (it need not parse), redacted.
    package static func string(_ text: String) -> String {
        RedactionPolicy.default.url(text)
    }
}
