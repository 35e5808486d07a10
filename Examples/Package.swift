// swift-tools-version: 6.0
import PackageDescription

// Runnable examples. A package of their own, so the root package's product list stays clean.
let package = Package(
    name: "CourierExamples",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        .package(name: "Courier", path: "..")
    ],
    targets: [
        .executableTarget(
            name: "Quickstart",
            dependencies: [.product(name: "Courier", package: "Courier")]
        )
    ],
    swiftLanguageModes: [.v6]
)
