// What the benchmarks share besides PipelineFixtures (Breakdown/), which holds the target, the
// in-memory transport and the three plugins every figure uses.
import Foundation
import PipelineFixtures

/// Runs `operation` `total` times in `workers` concurrent loops.
public func concurrently(
    _ workers: Int, total: Int, _ operation: @escaping @Sendable () async throws -> Void
) async throws {
    let started = Counter()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<workers {
            group.addTask {
                while started.add(1) <= total { try await operation() }
            }
        }
        try await group.waitForAll()
    }
}
