// swift-tools-version: 6.1
import PackageDescription

// Measurements of Courier against raw URLSession. A package of its own, depending on the root by
// path, so the root package never gains a dependency.
let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Courier", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Stubbed requests through the whole pipeline: throughput and mallocs per request, with
        // committed malloc thresholds (Thresholds/) checked in CI.
        .executableTarget(
            name: "StubbedPipeline",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "Benchmark", package: "package-benchmark"),
                "BenchmarkSupport",
            ],
            path: "Benchmarks/StubbedPipeline",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // Throughput, de-duplication, cancellation and memory after load next to raw URLSession
        // (run by scripts/bench).
        .executableTarget(
            name: "LoadCheck",
            dependencies: [
                .product(name: "Courier", package: "Courier"), .product(name: "CourierTesting", package: "Courier"),
                "BenchmarkSupport", "HeapStatistics",
            ]
        ),
        // The plugins and helpers the benchmarks share.
        .target(name: "BenchmarkSupport", dependencies: [.product(name: "Courier", package: "Courier")]),
        // The allocator's count of bytes in use (mallinfo2 / malloc_zone_statistics), for LoadCheck.
        .target(name: "HeapStatistics"),
        // Peak memory of 1 GiB uploads, multipart bodies and downloads (run by scripts/large-transfers).
        .executableTarget(
            name: "TransferCheck",
            dependencies: [.product(name: "Courier", package: "Courier")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
