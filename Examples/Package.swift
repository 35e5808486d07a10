// swift-tools-version: 6.2
import PackageDescription

// Runnable examples. A package of their own, so the root package's product list stays clean.
let package = Package(
    name: "CourierExamples",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        .package(name: "Courier", path: ".."),
        // The integrations (CourierLogging, CourierMetrics) and, for the Observability example, the
        // packages they bridge to; the Courier package itself depends on nothing.
        .package(name: "CourierIntegrations", path: "../Integrations"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        // What the command-line examples share: Ctrl-C as task cancellation, a progress line that
        // log lines do not land on.
        .target(name: "ExampleSupport"),
        // The README's quick start.
        .executableTarget(
            name: "Quickstart",
            dependencies: [.product(name: "Courier", package: "Courier")]
        ),
        // One API described twice: as an enum and as a struct per resource; plus a client.
        .target(
            name: "TodoAPI",
            dependencies: [.product(name: "Courier", package: "Courier")]
        ),
        // `swift run todo list|fetch ID|post TITLE [--base-url URL]`: offline against stubs by default.
        .executableTarget(
            name: "todo",
            dependencies: ["TodoAPI", "ExampleSupport", .product(name: "Courier", package: "Courier")],
            path: "Sources/TodoCLI"
        ),
        // A download with a live progress bar.
        .executableTarget(
            name: "Download",
            dependencies: ["ExampleSupport", .product(name: "Courier", package: "Courier")],
            path: "Sources/DownloadProgress"
        ),
        // Server-Sent Events printed as they arrive: offline against a streaming stub by default.
        .executableTarget(
            name: "events",
            dependencies: ["ExampleSupport", .product(name: "Courier", package: "Courier")],
            path: "Sources/StreamEvents"
        ),
        // Courier into the ecosystem through the integrations' products: NetworkLoggerPlugin into
        // swift-log (CourierLogging), every call counted and timed into swift-metrics (CourierMetrics).
        .target(
            name: "Observability",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierLogging", package: "CourierIntegrations"),
                .product(name: "CourierMetrics", package: "CourierIntegrations"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "ObservabilityTests",
            dependencies: [
                "Observability",
                .product(name: "Courier", package: "Courier"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // Every code sample of the README and the DocC articles, compiled as written.
        .target(
            name: "DocSnippets",
            dependencies: [.product(name: "Courier", package: "Courier")]
        ),
        .testTarget(
            name: "DocSnippetTests",
            dependencies: [
                "DocSnippets", "TodoAPI",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
            ]
        ),
        // How to test your own code with CourierTesting: stubs, scripted answers, and recorded
        // answers replayed from Fixtures/ (HAR files, read and written by path, not resources).
        .testTarget(
            name: "TodoAPITests",
            dependencies: [
                "TodoAPI",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
            ],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
