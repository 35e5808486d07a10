import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a download is saved, chosen once the response has arrived.
///
/// ```swift
/// // Into a folder, under a name you pick (confined: "../x" is rejected).
/// .folder(downloads) { _, response in response.suggestedFilename ?? "file" }
/// // The server's suggested name, in a folder.
/// .suggestedFileName(in: downloads)
/// // Anywhere you decide.
/// .custom { temporaryURL, response in myURL }
/// ```
///
/// The file is moved there only when the request succeeds (after validation); a failed or
/// cancelled download leaves nothing behind.
public struct DownloadDestination: Sendable, Hashable {
    /// What to do on the way to the destination.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Create missing folders on the way to the destination.
        public static let createIntermediateDirectories = Options(rawValue: 1 << 0)
        /// Replace a file already at the destination (otherwise that is an error).
        public static let removePreviousFile = Options(rawValue: 1 << 1)
    }

    enum Kind {
        case folder(URL, @Sendable (_ temporaryURL: URL, _ response: HTTPURLResponse) -> String)
        case custom(@Sendable (_ temporaryURL: URL, _ response: HTTPURLResponse) throws -> URL)
    }

    private let id = UUID()
    let kind: Kind
    /// The options.
    public let options: Options

    /// Saves into `folder` under the relative path `fileName` returns. A path that would leave the
    /// folder (`..`, an absolute path, a symbolic link out) fails with
    /// ``CourierError/downloadDestination(_:)``.
    /// - Parameters:
    ///   - folder: The folder the file must stay in: a file URL (another fails with
    ///     ``DownloadFailure/notAFileURL(_:)``).
    ///   - options: Default: `[.createIntermediateDirectories]`.
    ///   - fileName: The file's path inside the folder, from the temporary file and the response.
    /// - Returns: The destination.
    public static func folder(
        _ folder: URL, options: Options = [.createIntermediateDirectories],
        fileName: @escaping @Sendable (_ temporaryURL: URL, _ response: HTTPURLResponse) -> String
    ) -> DownloadDestination {
        DownloadDestination(kind: .folder(folder, fileName), options: options)
    }

    /// Saves into `folder` under the server's suggested file name (`Content-Disposition`'s
    /// `filename*` or `filename`, else the URL's last path component, else `download`), confined to
    /// the folder.
    /// - Parameters:
    ///   - folder: The folder.
    ///   - options: Default: `[.createIntermediateDirectories]`.
    /// - Returns: The destination.
    public static func suggestedFileName(
        in folder: URL, options: Options = [.createIntermediateDirectories]
    ) -> DownloadDestination {
        .folder(folder, options: options) { _, response in
            SuggestedFileName.from(response)
        }
    }

    /// Saves wherever `destination` says. No folder confinement: use ``folder(_:options:fileName:)``
    /// when any part of the name comes from the server. Answering with the temporary URL itself
    /// keeps the file where it is (``Response/fileURL``), and it is then yours to move or remove.
    /// - Parameters:
    ///   - options: Default: `[.createIntermediateDirectories]`.
    ///   - destination: The file URL, from the temporary file and the response.
    /// - Returns: The destination.
    public static func custom(
        options: Options = [.createIntermediateDirectories],
        _ destination: @escaping @Sendable (_ temporaryURL: URL, _ response: HTTPURLResponse) throws -> URL
    ) -> DownloadDestination {
        DownloadDestination(kind: .custom(destination), options: options)
    }

    private init(kind: Kind, options: Options) {
        self.kind = kind
        self.options = options
    }

    public static func == (lhs: DownloadDestination, rhs: DownloadDestination) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// Where the file goes, checked against the folder when there is one.
    func resolve(temporaryURL: URL, response: HTTPURLResponse) throws(CourierError) -> Placement {
        switch kind {
        case .custom(let destination):
            do {
                let url = try destination(temporaryURL, response)
                guard url.isFileURL else { throw DownloadFailure.notAFileURL(url) }
                let name = url.lastPathComponent
                guard !name.isEmpty, name != ".", name != "..", name != "/" else {
                    throw DownloadFailure.notAFileURL(url)
                }
                return Placement(root: url.deletingLastPathComponent(), components: [name])
            } catch {
                throw .downloadDestination(error)
            }
        case .folder(let folder, let fileName):
            // As for `.custom`: a URL that is not a file URL (`https://host/dir`, or a string
            // without a scheme) would have its path taken as a local folder. Found by review.
            guard folder.isFileURL else { throw .downloadDestination(DownloadFailure.notAFileURL(folder)) }
            let name = fileName(temporaryURL, response)
            return try Self.confine(name, to: folder)
        }
    }

    /// A file's place: a folder the caller chose (links in its path followed) and the path inside
    /// it, one component at a time (never followed through a link).
    struct Placement: Sendable {
        let root: URL
        let components: [String]

        var url: URL {
            components.reduce(root.standardizedFileURL) { $0.appendingPathComponent($1) }
        }
    }

    static func confine(_ name: String, to folder: URL) throws(CourierError) -> Placement {
        // `.` is dropped; `..` is refused, even where it would stay inside (the folders are walked
        // without ever going up).
        let components = name.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
            .filter { $0 != "." }
        guard !name.isEmpty, !name.hasPrefix("/"), !name.contains("\0"), !components.isEmpty,
            !components.contains("..")
        else {
            throw .downloadDestination(DownloadFailure.outsideFolder(name: name, folder: folder))
        }
        return Placement(root: folder, components: components)
    }

    /// Moves the downloaded file to its place as the options say. Race-safe: the folders on the way
    /// are opened one by one without following links, and the file is linked or renamed relative to
    /// the last one opened, so a folder swapped for a link meanwhile cannot send it elsewhere. Only
    /// a regular file is ever replaced (with `.removePreviousFile`); a folder, link or anything else
    /// in the way is an error, never deleted.
    ///
    /// Done on a thread of its own, never on Swift's cooperative pool: into another file system
    /// (a temporary folder on tmpfs, the destination on disk) the move is a copy of the whole
    /// file. It is waited for; a cancel that came before the file is placed (or during a copy, at
    /// its next megabyte) places nothing, removes what a copy wrote and throws
    /// ``CourierError/cancelled``. (A call whose deadline passed while the file was placed
    /// removes it: see `Provider.perform`.)
    nonisolated(nonsending) func move(_ temporaryURL: URL, to placement: Placement) async throws(CourierError) {
        let createFolders = options.contains(.createIntermediateDirectories)
        let replace = options.contains(.removePreviousFile)
        do {
            try await BlockingIO.complete { isCancelled in
                try SafeFiles.move(
                    temporaryURL, into: placement.root, path: placement.components, createFolders: createFolders,
                    replace: replace, isCancelled: isCancelled)
            }
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .downloadDestination(error)
        }
    }
}

/// Why a download could not be saved. Wrapped in ``CourierError/downloadDestination(_:)``.
public enum DownloadFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The chosen name leads outside the destination folder.
    case outsideFolder(name: String, folder: URL)
    /// A file is already there and `.removePreviousFile` was not given.
    case fileExists(URL)
    /// A custom destination returned a URL that is not a file URL.
    case notAFileURL(URL)
    /// Something that is not a regular file (a folder, a link, a device) is where the file would
    /// go; it is never replaced.
    case notARegularFile(URL)
    /// A folder on the way could not be opened or created (it is a link, a file, or the system
    /// refused: the reason).
    case folderUnavailable(URL, reason: String)

    public var description: String {
        switch self {
        case .outsideFolder(let name, let folder): "'\(name)' would leave the folder \(folder.path)"
        case .fileExists(let url): "a file already exists at \(url.path)"
        case .notAFileURL(let url): "\(url.absoluteString) is not a file URL"
        case .notARegularFile(let url): "\(url.path) is not a regular file and is never replaced"
        case .folderUnavailable(let url, let reason): "cannot use the folder \(url.path): \(reason)"
        }
    }
}

/// The file name a response suggests: RFC 6266 `Content-Disposition` (`filename*` in RFC 8187
/// form first, then `filename`), else the URL's last path component, else `download`. The name is
/// made safe to use as one file name: only its last path component is kept (`/` and `\\` separate
/// components), control and bidirectional-formatting characters are removed, leading dots and
/// spaces are dropped, and it is cut to 255 UTF-8 bytes on a character boundary.
enum SuggestedFileName {
    /// The longest name kept, in UTF-8 bytes (the common file system limit).
    static let maxBytes = 255

    static func from(_ response: HTTPURLResponse) -> String {
        if let header = response.value(forHTTPHeaderField: "Content-Disposition"),
            let name = fromContentDisposition(header).map(sanitize), !name.isEmpty
        {
            return name
        }
        if let last = response.url?.lastPathComponent, case let name = sanitize(last), !name.isEmpty {
            return name
        }
        return "download"
    }

    /// The `filename*` (preferred) or `filename` parameter, unquoted and decoded, not yet sanitized.
    static func fromContentDisposition(_ header: String) -> String? {
        var plain: String?
        var extended: String?
        for (key, value) in parameters(of: header) {
            switch key {
            case "filename*": extended = extended ?? decodeExtended(value)
            case "filename": plain = plain ?? value
            default: continue
            }
        }
        return extended ?? plain
    }

    /// The `;`-separated `key=value` parameters after the disposition type, with quoted strings
    /// honoured (a `;` inside quotes is part of the value) and `\\` escapes removed.
    static func parameters(of header: String) -> [(String, String)] {
        var result: [(String, String)] = []
        var characters = Substring(header)
        // Skip the disposition type.
        guard let first = characters.firstIndex(of: ";") else { return [] }
        characters = characters[characters.index(after: first)...]
        while !characters.isEmpty {
            characters = characters.drop { $0 == " " || $0 == "\t" || $0 == ";" }
            let keyEnd = characters.firstIndex { $0 == "=" || $0 == ";" } ?? characters.endIndex
            let key = characters[..<keyEnd].trimmingWhitespace().lowercased()
            characters = characters[keyEnd...]
            guard characters.first == "=" else { continue }
            characters = characters.dropFirst().drop { $0 == " " || $0 == "\t" }
            var value = ""
            if characters.first == "\"" {
                characters = characters.dropFirst()
                var escaped = false
                while let character = characters.first {
                    characters = characters.dropFirst()
                    if escaped {
                        value.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        value.append(character)
                    }
                }
                characters = characters.drop { $0 != ";" }
            } else {
                let end = characters.firstIndex(of: ";") ?? characters.endIndex
                value = characters[..<end].trimmingWhitespace()
                characters = characters[end...]
            }
            if !key.isEmpty { result.append((key, value)) }
        }
        return result
    }

    /// RFC 8187: `charset'language'percent-encoded`, UTF-8 or ISO-8859-1.
    static func decodeExtended(_ value: String) -> String? {
        let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3 else { return nil }
        let charset = pieces[0].lowercased()
        var bytes: [UInt8] = []
        var utf8 = Array(pieces[2].utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
                let decoded = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(decoded)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        switch charset {
        case "utf-8": return UTF8Text.string(bytes)
        case "iso-8859-1": return String(bytes.map { Character(Unicode.Scalar($0)) })
        default: return nil
        }
    }

    /// One safe file name from `name` (see the type's summary); empty when nothing is left.
    static func sanitize(_ name: String) -> String {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var scalars = String.UnicodeScalarView()
        for scalar in last.unicodeScalars where !isUnsafe(scalar) {
            scalars.append(scalar)
        }
        var cleaned = Substring(String(scalars))
        cleaned = cleaned.drop { $0 == "." || $0 == " " }
        while cleaned.last == " " || cleaned.last == "." { cleaned.removeLast() }
        var result = ""
        for character in cleaned {
            guard result.utf8.count + String(character).utf8.count <= maxBytes else { break }
            result.append(character)
        }
        return result
    }

    /// Control characters (C0, DEL, C1), bidirectional formatting (which can disguise an
    /// extension: `evil\u{202E}fdp.exe`), zero-width characters and the byte-order mark.
    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x200B...0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x061C, 0xFEFF: true
        default: false
        }
    }
}
