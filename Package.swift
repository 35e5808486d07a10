// swift-tools-version: 6.2
import PackageDescription

// The root package has no dependencies and never gains one: tooling that needs packages
// (benchmarks) lives in its own sub-package that depends on this one by path.
let package = Package(
    name: "Courier",
    platforms: [
        .macOS(.v13),
        .iOS(.v16),
        .tvOS(.v16),
        .watchOS(.v9),
        .visionOS(.v1),
    ],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        // Test doubles for code that uses Courier: a stub transport and a test clock.
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        // The checks every Transport must pass, for transports' own test targets (Swift Testing).
        .library(name: "CourierTransportConformance", targets: ["CourierTransportConformance"]),
    ],
    targets: [
        .target(name: "Courier"),
        .target(name: "CourierTesting", dependencies: ["Courier"]),
        .target(name: "CourierTransportConformance", dependencies: ["Courier"]),
        .testTarget(name: "CourierTests", dependencies: ["Courier", "CourierTesting", "CourierTransportConformance"]),
    ],
    swiftLanguageModes: [.v6]
)
