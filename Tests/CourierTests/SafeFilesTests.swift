import Foundation
import Testing

@testable import Courier

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Placing a finished download on file systems that cannot do what the usual path does.
@Suite struct SafeFilesTests {
    /// A `linkat` that fails as a file system without hard links does (FAT, exFAT), after the
    /// first call fails as `EXDEV` when `crossesFileSystems`.
    static func noHardLinks(crossesFileSystems: Bool) -> SafeFiles.Link {
        let calls = Locked(0)
        return { _, _, _, _ in
            let call = calls.withLock { calls in
                calls += 1
                return calls
            }
            errno = call == 1 && crossesFileSystems ? EXDEV : EPERM
            return -1
        }
    }

    /// Found by review: a download moved across file systems onto one without hard links failed
    /// with "operation not permitted"; it is renamed into place, and nothing else is left.
    @Test(arguments: [false, true])
    func aFolderWithoutHardLinksGetsTheFileRenamedIntoPlace(crossesFileSystems: Bool) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let source = TemporaryFiles.newDownloadURL()
        defer { unlink(source.path) }
        try Data("downloaded".utf8).write(to: source)
        try SafeFiles.move(
            source, into: folder.url, path: ["report.pdf"], createFolders: false, replace: false,
            link: Self.noHardLinks(crossesFileSystems: crossesFileSystems))
        #expect(try Data(contentsOf: folder.url.appendingPathComponent("report.pdf")) == Data("downloaded".utf8))
        #expect(folder.contents == ["report.pdf"])
        #expect(!FileManager.default.fileExists(atPath: source.path))
    }

    /// What is there already is still never replaced unless asked.
    @Test func aFileInTheWayIsKept() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let existing = folder.url.appendingPathComponent("report.pdf")
        try Data("mine".utf8).write(to: existing)
        let source = TemporaryFiles.newDownloadURL()
        defer { unlink(source.path) }
        try Data("downloaded".utf8).write(to: source)
        #expect(throws: DownloadFailure.self) {
            try SafeFiles.move(
                source, into: folder.url, path: ["report.pdf"], createFolders: false, replace: false,
                link: Self.noHardLinks(crossesFileSystems: true))
        }
        #expect(try Data(contentsOf: existing) == Data("mine".utf8))
        #expect(folder.contents == ["report.pdf"])
    }
}
