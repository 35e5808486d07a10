import Foundation

/// Runs `work` on a thread of its own and waits for it without holding a thread of Swift's
/// cooperative pool. For test work that blocks for long: a process waited for, or seconds of
/// computation under a sanitizer. On a 2-core machine the pool has two threads, and a test
/// that holds one for seconds stalls every other test's requests (they then miss their deadlines).
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
