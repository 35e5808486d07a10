// The availability check's own test (scripts/availability-check --self-test): each line marked
// `expect:` uses an API newer than macOS 13 / iOS 16 / tvOS 16 / watchOS 9 and must be reported;
// nothing else in this file may be. Not part of any target: the self-test builds it in a throwaway
// package.
import Foundation
import Synchronization

public func decodedText(_ data: Data) -> String? {
    String(validating: data, as: UTF8.self)  // expect: String.init(validating:as:)
}

public func counter() -> Int {
    let mutex = Mutex(0)  // expect: Mutex.init(_:)
    return mutex.withLock { $0 }  // expect: Mutex.withLock
}

public func portableText(_ data: Data) -> String? {
    String(data: data, encoding: .utf8)
}

#if os(Linux)
    public func linuxOnly() -> UInt {
        let value = Atomic<UInt>(1)
        return value.load(ordering: .relaxed)
    }
#endif

public func guarded(_ data: Data) -> String? {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
        return String(validating: data, as: UTF8.self)  // availability: guarded
    }
    return String(data: data, encoding: .utf8)
}

extension String {
    static func strictUTF8(_ data: Data) -> String? {
        Self(validating: data, as: UTF8.self)  // expect: String.init(validating:as:)
    }
}

public func discarding() async {
    await withDiscardingTaskGroup { _ in }  // expect: withDiscardingTaskGroup(returning:isolation:body:)
}

public func backDeployed() -> AsyncStream<Int> {
    AsyncStream.makeStream(of: Int.self).stream
}
