// swift-tools-version: 6.2
import PackageDescription

// Measurements of Courier against raw URLSession and raw AsyncHTTPClient. A package of its own, depending on the root by
// path, so the root package never gains a dependency.
let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Courier", path: ".."),
        .package(name: "CourierAsyncHTTPClient", path: "../Transports/AsyncHTTPClient"),
        .package(name: "CourierBreakdown", path: "Breakdown"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
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
                .product(name: "PipelineFixtures", package: "CourierBreakdown"),
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
                .product(name: "CourierAsyncHTTPClient", package: "CourierAsyncHTTPClient"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PipelineFixtures", package: "CourierBreakdown"),
                "BenchmarkSupport", "HeapStatistics",
            ]
        ),
        // Both transports next to the raw clients they wrap, each client measured alone in rotating
        // blocks, with an A/A control (run by scripts/bench).
        .executableTarget(
            name: "TransportBench",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierAsyncHTTPClient", package: "CourierAsyncHTTPClient"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                "BenchmarkSupport",
            ]
        ),
        // The HTTP cache: a fresh hit next to a loopback request, a revalidation, and peak memory of
        // a 1 GiB disk cache (run by scripts/bench-cache).
        .executableTarget(name: "CacheBench", dependencies: [.product(name: "Courier", package: "Courier")]),
        // Helpers the benchmarks share (the target, transport and plugins: PipelineFixtures).
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "PipelineFixtures", package: "CourierBreakdown"),
            ]
        ),
        // The allocator's count of bytes in use (mallinfo2 / malloc_zone_statistics), for LoadCheck.
        .target(name: "HeapStatistics"),
        // Peak memory of 1 GiB uploads, multipart bodies, downloads and streams on both transports
        // (run by scripts/large-transfers).
        .executableTarget(
            name: "TransferCheck",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierAsyncHTTPClient", package: "CourierAsyncHTTPClient"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
