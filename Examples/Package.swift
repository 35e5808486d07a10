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
            dependencies: ["TodoAPI", .product(name: "Courier", package: "Courier")],
            path: "Sources/TodoCLI"
        ),
        // A download with a live progress bar.
        .executableTarget(
            name: "Download",
            dependencies: [.product(name: "Courier", package: "Courier")],
            path: "Sources/DownloadProgress"
        ),
        // Server-Sent Events printed as they arrive: offline against a streaming stub by default.
        .executableTarget(
            name: "events",
            dependencies: [.product(name: "Courier", package: "Courier")],
            path: "Sources/StreamEvents"
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
        // How to test your own code with CourierTesting.
        .testTarget(
            name: "TodoAPITests",
            dependencies: [
                "TodoAPI",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
