import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system calls Courier's file writers share.
enum FileIO {
    /// Writes all of `data` to `descriptor`, at `offset` (`pwrite`) or at the file's position
    /// (`write`), again after an interrupted call. `false` on an error (`errno` says which), or if
    /// the system writes nothing.
    static func writeAll(_ data: Data, to descriptor: Int32, at offset: Int64? = nil) -> Bool {
        data.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var done = 0
            while done < raw.count {
                let result =
                    if let offset {
                        pwrite(descriptor, base + done, raw.count - done, off_t(offset) + off_t(done))
                    } else {
                        write(descriptor, base + done, raw.count - done)
                    }
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { return false }
                done += result
            }
            return true
        }
    }
}
