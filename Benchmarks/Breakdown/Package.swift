// swift-tools-version: 6.1
import PackageDescription

// A tiny release executable for callgrind (scripts/bench-breakdown): stubbed requests through
// Courier's whole pipeline, depending on the root package alone so it builds in a minute.
let package = Package(
    name: "CourierBreakdown",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Courier", path: "../..")],
    targets: [
        .executableTarget(
            name: "StubLoop",
            dependencies: [.product(name: "Courier", package: "Courier")]
        ),
        .executableTarget(
            name: "WireLoop",
            dependencies: [.product(name: "Courier", package: "Courier")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
