// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "loopd",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "LoopRuntime", targets: ["LoopRuntime"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .target(name: "CLoopShims"),
        .target(name: "LoopRuntime", dependencies: ["CLoopShims"], swiftSettings: strict),
        .executableTarget(
            name: "LoopBench",
            dependencies: [
                "LoopRuntime", "CLoopShims",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/LoopBench",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "loop-example", dependencies: ["LoopRuntime"],
            path: "Examples/loop-example", swiftSettings: strict),
        .testTarget(name: "LoopRuntimeTests", dependencies: ["LoopRuntime", "loop-example"], swiftSettings: strict),
    ]
)
