// swift-tools-version: 6.2
import PackageDescription

// Courier's integrations: one companion package with one product per ecosystem, so that CI builds
// the root package once for all of them (see README.md, "Why one package"). Each product depends
// only on the packages it needs; an app that adds CourierLogging builds swift-log and nothing else.
// The root package keeps zero dependencies.
let package = Package(
    name: "CourierIntegrations",
    platforms: [
        .macOS(.v13),
        .iOS(.v16),
        .tvOS(.v16),
        .watchOS(.v9),
        .visionOS(.v1),
    ],
    products: [
        // NetworkLoggerPlugin's lines into a swift-log Logger.
        .library(name: "CourierLogging", targets: ["CourierLogging"]),
        // Every call counted and timed into swift-metrics.
        .library(name: "CourierMetrics", targets: ["CourierMetrics"]),
        // One span per call into swift-distributed-tracing, its context sent in the request.
        .library(name: "CourierTracing", targets: ["CourierTracing"]),
        // A ClientTransport: swift-openapi-generator's clients sent through a Courier Provider.
        .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"]),
    ],
    dependencies: [
        .package(name: "Courier", path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // Tracing re-exports ServiceContext (its ServiceContextModule): no swift-service-context.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // The runtime only: the client used in the tests is generated once and committed
        // (scripts/generate-openapi-client), so nothing builds the generator or its plugin.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "CourierLogging",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "CourierMetrics",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "CourierTracing",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "CourierOpenAPI",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "CourierLoggingTests",
            dependencies: [
                "CourierLogging",
                .product(name: "Courier", package: "Courier"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "CourierMetricsTests",
            dependencies: [
                "CourierMetrics",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "CourierTracingTests",
            dependencies: [
                "CourierTracing",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        // With a client generated from OpenAPI/openapi.yaml (Generated/) and HAR fixtures (Fixtures/).
        .testTarget(
            name: "CourierOpenAPITests",
            dependencies: [
                "CourierOpenAPI",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            exclude: ["OpenAPI", "Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
