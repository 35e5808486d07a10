import Courier
import Foundation

/// A seeded generator (SplitMix64) for stress tests, so a failing run can be repeated: the test
/// prints its seed, and `COURIER_TEST_SEED=<seed>` runs it with that seed again.
struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    /// A generator seeded from `COURIER_TEST_SEED` or at random (plus `salt`, e.g. the round of a
    /// parameterized test); the seed is printed with the test's name.
    static func forTest(_ name: String, salt: UInt64 = 0) -> Locked<SeededRandom> {
        let base =
            ProcessInfo.processInfo.environment["COURIER_TEST_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 0...UInt64.max)
        let seed = base &+ salt
        print("\(name): seed \(base) (COURIER_TEST_SEED=\(base) repeats it), salt \(salt)")
        return Locked(SeededRandom(seed: seed))
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Locked where Value == SeededRandom {
    func int(in range: ClosedRange<Int>) -> Int { withLock { Int.random(in: range, using: &$0) } }
    func bool() -> Bool { withLock { Bool.random(using: &$0) } }
}

extension SeededRandom {
    /// `count` pseudo-random bytes from `seed`, made in one tight loop: megabytes cost
    /// milliseconds even in a debug build under a sanitizer (a `map` over `random(in:)` took a
    /// core for many seconds there, and every other test waited for it).
    static func bytes(_ count: Int, seed: UInt64) -> Data {
        var generator = SeededRandom(seed: seed)
        var data = Data(count: (count + 7) / 8 * 8)
        data.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for index in words.indices { words[index] = generator.next() }
        }
        return data.prefix(count)
    }
}
