// swift-tools-version:6.0
import PackageDescription

// loopd-web, the web dashboard: a package of its own, so the daemon's package
// (and everything that depends on LoopRuntime or LoopdClient) pulls in no
// HTTP server. It talks to loopd through the LoopdClient library only.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "loopd-web",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "loopd-web", targets: ["loopd-web"]),
    ],
    dependencies: [
        .package(name: "loopd", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .target(
            name: "LoopdWeb",
            dependencies: [
                .product(name: "LoopdClient", package: "loopd"),
                // Its user database: the name of the uid that submitted a job.
                .product(name: "LoopPlatform", package: "loopd"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "loopd-web",
            dependencies: ["LoopdWeb", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict),
        .testTarget(
            name: "LoopdWebTests",
            dependencies: [
                "LoopdWeb",
                .product(name: "Hummingbird", package: "hummingbird"),
                // A channel for the requests' context (RouterClient); not
                // HummingbirdTesting, whose product builds an HTTP client
                // with TLS and HTTP/2 these tests do not use.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strict),
    ]
)
