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
    ///   - folder: The folder the file must stay in.
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
    /// when any part of the name comes from the server.
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
    func resolve(temporaryURL: URL, response: HTTPURLResponse) throws(CourierError) -> URL {
        switch kind {
        case .custom(let destination):
            do {
                let url = try destination(temporaryURL, response)
                guard url.isFileURL else { throw DownloadFailure.notAFileURL(url) }
                return url
            } catch {
                throw .downloadDestination(error)
            }
        case .folder(let folder, let fileName):
            let name = fileName(temporaryURL, response)
            return try Self.confine(name, to: folder)
        }
    }

    static func confine(_ name: String, to folder: URL) throws(CourierError) -> URL {
        guard !name.isEmpty, !name.hasPrefix("/"), !name.contains("\0") else {
            throw .downloadDestination(DownloadFailure.outsideFolder(name: name, folder: folder))
        }
        let root = folder.standardizedFileURL.resolvingSymlinksInPath()
        let candidate = root.appendingPathComponent(name).standardizedFileURL
        // Resolve links in the part that exists, so a link inside the folder cannot point out.
        let resolvedParent = candidate.deletingLastPathComponent().resolvingSymlinksInPath()
        let resolved = resolvedParent.appendingPathComponent(candidate.lastPathComponent)
        let rootPath = root.path.hasSuffix("/") ? root.path : root.path + "/"
        guard resolved.path.hasPrefix(rootPath), candidate.lastPathComponent != "..",
            candidate.lastPathComponent != "."
        else {
            throw .downloadDestination(DownloadFailure.outsideFolder(name: name, folder: folder))
        }
        return resolved
    }

    /// Moves the downloaded file to `destination` as the options say.
    func move(_ temporaryURL: URL, to destination: URL) throws(CourierError) {
        let files = FileManager.default
        do {
            let parent = destination.deletingLastPathComponent()
            if options.contains(.createIntermediateDirectories) {
                try files.createDirectory(at: parent, withIntermediateDirectories: true)
            }
            if files.fileExists(atPath: destination.path) {
                guard options.contains(.removePreviousFile) else { throw DownloadFailure.fileExists(destination) }
                try files.removeItem(at: destination)
            }
            try files.moveItem(at: temporaryURL, to: destination)
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

    public var description: String {
        switch self {
        case .outsideFolder(let name, let folder): "'\(name)' would leave the folder \(folder.path)"
        case .fileExists(let url): "a file already exists at \(url.path)"
        case .notAFileURL(let url): "\(url.absoluteString) is not a file URL"
        }
    }
}

/// The file name a response suggests: RFC 6266 `Content-Disposition` (`filename*` in RFC 8187
/// form first, then `filename`), else the URL's last path component, else `download`. The result
/// is still confined to its folder by the destination.
enum SuggestedFileName {
    static func from(_ response: HTTPURLResponse) -> String {
        if let header = response.value(forHTTPHeaderField: "Content-Disposition"),
            let name = fromContentDisposition(header), !name.isEmpty
        {
            return name
        }
        if let last = response.url?.lastPathComponent, !last.isEmpty, last != "/" {
            return last
        }
        return "download"
    }

    static func fromContentDisposition(_ header: String) -> String? {
        var plain: String?
        for parameter in header.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard pair.count == 2 else { continue }
            let key = pair[0].lowercased()
            var value = pair[1]
            if key == "filename*" {
                // charset'language'percent-encoded
                let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                if pieces.count == 3, let decoded = String(pieces[2]).removingPercentEncoding {
                    return decoded
                }
            } else if key == "filename" {
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                    value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
                }
                plain = value
            }
        }
        return plain
    }
}
