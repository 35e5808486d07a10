// `import Courier` is enough to use what Courier's API speaks in: `URL`, `Data`, `URLRequest`,
// `HTTPURLResponse`. On Linux those last two live in FoundationNetworking, which code written on
// Apple platforms does not import; re-exporting it keeps samples and user code the same on both.
@_exported import Foundation

#if canImport(FoundationNetworking)
    @_exported import FoundationNetworking
#endif
