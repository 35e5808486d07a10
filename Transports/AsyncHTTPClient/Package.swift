// swift-tools-version: 6.2
import PackageDescription

// Courier on AsyncHTTPClient: a companion package, so the root package keeps zero dependencies.
// It depends on the root by path while both live in one repository.
let package = Package(
    name: "CourierAsyncHTTPClient",
    // No watchOS: watchOS apps may not open their own sockets (Network.framework's low-level
    // networking is limited to audio streaming there), so this transport cannot work; watchOS
    // apps use URLSessionTransport. Building it for watchOS stops with an #error that says so.
    platforms: [
        .macOS(.v13),
        .iOS(.v16),
        .tvOS(.v16),
    ],
    products: [
        .library(name: "CourierAsyncHTTPClient", targets: ["CourierAsyncHTTPClient"])
    ],
    dependencies: [
        .package(name: "Courier", path: "../.."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Already AsyncHTTPClient's own dependency: TLS failures are mapped from its errors, trust roots
        // and client identities go through its TLSConfiguration.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
    ],
    targets: [
        // zlib, for decoding gzip and deflate bodies under Courier's limits (AsyncHTTPClient's own
        // decompression has no floor below which small bodies always pass).
        .systemLibrary(name: "CCourierZlib", path: "Sources/CCourierZlib"),
        .target(
            name: "CourierAsyncHTTPClient",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                "CCourierZlib",
            ]
        ),
        .testTarget(
            name: "CourierAsyncHTTPClientTests",
            dependencies: [
                "CourierAsyncHTTPClient",
                "CCourierZlib",
                .product(name: "Courier", package: "Courier"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "CourierTransportConformance", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
