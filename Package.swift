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
        .library(name: "LoopdCore", targets: ["LoopdCore"]),
        .executable(name: "loopd", targets: ["loopd"]),
        .executable(name: "loopctl", targets: ["loopctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        .target(name: "CLoopShims"),
        .target(name: "LoopdProtocol", swiftSettings: strict),
        .target(name: "TOML", swiftSettings: strict),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .target(
            name: "LoopdCore",
            dependencies: [
                "LoopRuntime", "LoopdProtocol", "TOML", "CLoopShims", "CSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict),
        .executableTarget(name: "loopd", dependencies: ["LoopdCore"], swiftSettings: strict),
        .target(
            name: "LoopctlCommands",
            dependencies: ["LoopdProtocol", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict),
        .executableTarget(name: "loopctl", dependencies: ["LoopctlCommands"], swiftSettings: strict),
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
            name: "LoopdBench",
            dependencies: ["LoopdProtocol", "CLoopShims"],
            path: "Benchmarks/LoopdBench",
            swiftSettings: strict),
        .executableTarget(
            name: "loop-example", dependencies: ["LoopRuntime"],
            path: "Examples/loop-example", swiftSettings: strict),
        // libFuzzer targets (Fuzz/run.sh, docs/RELIABILITY.md); an ordinary build replays corpus files.
        .target(name: "FuzzReplay", path: "Fuzz/FuzzReplay", swiftSettings: strict),
        .executableTarget(
            name: "FuzzRequestDecoder", dependencies: ["LoopdProtocol", "FuzzReplay"], path: "Fuzz/FuzzRequestDecoder",
            swiftSettings: strict + [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzLineFramer", dependencies: ["LoopdProtocol", "FuzzReplay"], path: "Fuzz/FuzzLineFramer",
            swiftSettings: strict + [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzConfigParser", dependencies: ["LoopdCore", "FuzzReplay"], path: "Fuzz/FuzzConfigParser",
            swiftSettings: strict + [.unsafeFlags(["-parse-as-library"])]),
        .testTarget(name: "TOMLTests", dependencies: ["TOML"], swiftSettings: strict),
        .testTarget(name: "LoopRuntimeTests", dependencies: ["LoopRuntime", "loop-example"], swiftSettings: strict),
        .testTarget(
            name: "LoopdTests",
            dependencies: ["LoopdCore", "LoopdProtocol", "LoopctlCommands", "loopd", "loopctl"],
            swiftSettings: strict),
    ]
)
