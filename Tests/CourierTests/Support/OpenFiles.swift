import Foundation
import Testing

#if canImport(Darwin)
    import Darwin
#endif

/// The paths of the files this process has open, symbolic links resolved: `/proc/self/fd` on
/// Linux, `fcntl(F_GETPATH)` over every descriptor on Darwin (which has no `/proc`). Never an
/// empty answer for want of a way to look: a platform with neither fails the calling test.
func openFilePaths() -> [String] {
    #if os(Linux)
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")
        }
    #elseif canImport(Darwin)
        var paths: [String] = []
        for descriptor in 0..<getdtablesize() {
            var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
            guard fcntl(descriptor, F_GETPATH, &buffer) != -1 else { continue }
            let length = buffer.firstIndex(of: 0) ?? buffer.count
            let path = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            paths.append(URL(fileURLWithPath: path).resolvingSymlinksInPath().path)
        }
        return paths
    #else
        Issue.record("no way to list open files on this platform")
        return []
    #endif
}
