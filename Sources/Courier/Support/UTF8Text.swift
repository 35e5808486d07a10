/// Strict UTF-8 decoding that builds on every platform Courier declares.
///
/// `String(validating:as:)` does the same but needs macOS 15 / iOS 18 / tvOS 18 / watchOS 11;
/// Courier supports macOS 13 / iOS 16 / tvOS 16 / watchOS 9 (`scripts/availability-check` reports
/// uses of newer API).
enum UTF8Text {
    /// The bytes as a string when they are well-formed UTF-8, or `nil`.
    ///
    /// Decoding replaces every ill-formed sequence with U+FFFD, so the text encodes back to the same
    /// bytes exactly when the input was well-formed.
    static func string<Bytes: Collection>(_ bytes: Bytes) -> String? where Bytes.Element == UInt8 {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }
}
