// swift-tools-version: 6.0
import PackageDescription

// Measurements of Courier against raw URLSession. A package of its own, depending on the root by
// path, so the root package never gains a dependency.
let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Courier", path: "..")
    ],
    targets: [
        // Peak memory of 1 GiB uploads, multipart bodies and downloads (run by scripts/large-transfers).
        .executableTarget(
            name: "TransferCheck",
            dependencies: [.product(name: "Courier", package: "Courier")]
        ),
        // Throughput, de-duplication and cancellation next to raw URLSession (run by scripts/bench).
        .executableTarget(
            name: "LoadCheck",
            dependencies: [.product(name: "Courier", package: "Courier")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
