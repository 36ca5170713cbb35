// swift-tools-version:6.0
// The benchmarks, a package of their own so that depending on LoopRuntime or
// LoopdCore pulls in none of their peers (SwiftNIO). `make bench` runs them.
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "loopd-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "loopd", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "LoopBench",
            dependencies: [
                .product(name: "LoopRuntime", package: "loopd"),
                .product(name: "LoopPlatform", package: "loopd"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "LoopBench",
            swiftSettings: strict),
        .executableTarget(
            name: "LoopdBench",
            dependencies: [
                .product(name: "LoopdProtocol", package: "loopd"),
                .product(name: "LoopPlatform", package: "loopd"),
                .product(name: "LoopdClient", package: "loopd"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "LoopdBench",
            swiftSettings: strict),
    ]
)
