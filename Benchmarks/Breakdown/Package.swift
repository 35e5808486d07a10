// swift-tools-version: 6.2
import PackageDescription

// A tiny release executable for callgrind (scripts/bench-breakdown): stubbed requests through
// Courier's whole pipeline, depending on the root package alone so it builds in a minute.
let package = Package(
    name: "CourierBreakdown",
    platforms: [.macOS(.v15)],
    products: [
        // The target and in-memory transport the malloc thresholds (Benchmarks' StubbedPipeline)
        // are measured with, so callgrind's counts and CI's thresholds are of the same request.
        .library(name: "PipelineFixtures", targets: ["PipelineFixtures"])
    ],
    dependencies: [.package(name: "Courier", path: "../..")],
    targets: [
        .target(name: "PipelineFixtures", dependencies: [.product(name: "Courier", package: "Courier")]),
        .executableTarget(
            name: "StubLoop",
            dependencies: [.product(name: "Courier", package: "Courier"), "PipelineFixtures"]
        ),
        .executableTarget(
            name: "WireLoop",
            dependencies: [.product(name: "Courier", package: "Courier")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
