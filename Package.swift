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
        .library(name: "LoopPlatform", targets: ["LoopPlatform"]),
        .library(name: "LoopdProtocol", targets: ["LoopdProtocol"]),
        .library(name: "LoopdCore", targets: ["LoopdCore"]),
        // The Swift client library; it, and loopctl built on it, are the only products that link SwiftNIO.
        .library(name: "LoopdClient", targets: ["LoopdClient"]),
        .executable(name: "loopd", targets: ["loopd"]),
        .executable(name: "loopctl", targets: ["loopctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .target(name: "CLoopShims"),
        // Every kernel call of the package's modules and of the benchmarks.
        .target(name: "LoopPlatform", dependencies: ["CLoopShims"], swiftSettings: strict),
        .target(name: "LoopdProtocol", swiftSettings: strict),
        .target(name: "TOML", swiftSettings: strict),
        .target(
            name: "LoopdClient",
            // LoopPlatform for its kernel calls: the connect and the SO_PEERCRED check of the server's uid.
            dependencies: [
                "LoopdProtocol", "LoopPlatform",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // Its async calls run on the caller's executor: no executor switch per request.
            swiftSettings: strict + [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]),
        // libpq's header, its functions loaded with dlopen when [fleet] is configured (Fleet/PostgresConnection.swift).
        .target(name: "CPostgres"),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .target(
            name: "LoopdCore",
            dependencies: [
                "LoopRuntime", "LoopPlatform", "LoopdProtocol", "TOML", "CSystemd", "CPostgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict),
        .executableTarget(name: "loopd", dependencies: ["LoopdCore"], swiftSettings: strict),
        .target(
            name: "LoopctlCommands",
            dependencies: [
                "LoopdClient", "LoopdProtocol", "LoopPlatform",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict),
        .executableTarget(name: "loopctl", dependencies: ["LoopctlCommands"], swiftSettings: strict),
        .target(name: "LoopRuntime", dependencies: ["LoopPlatform"], swiftSettings: strict),
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
        // R3/R27 on a real main thread, one scenario per run (MainQueueTests).
        .executableTarget(
            name: "MainQueueProbe", dependencies: ["LoopRuntime"],
            path: "Tests/Programs/MainQueueProbe", swiftSettings: strict),
        // LoopdCore for one user of loops that the scripted kernel drives: the daemon's lane mailbox.
        .testTarget(
            name: "LoopRuntimeTests",
            dependencies: ["LoopRuntime", "LoopPlatform", "loop-example", "MainQueueProbe", "LoopdCore"],
            path: "Tests/LoopRuntimeTests", swiftSettings: strict),
        .testTarget(
            name: "LoopdTests",
            dependencies: [
                "LoopdCore", "LoopPlatform", "LoopdProtocol", "LoopdClient", "LoopctlCommands", "loopd", "loopctl",
                "CThreadCredentials",
            ],
            swiftSettings: strict),
        // Per-thread credentials: the client tests connect as another uid, and listen as one, and
        // LoopdTests (UserIsolationTests) connect as other uids, each from a thread of its own.
        .target(name: "CThreadCredentials", path: "Tests/CThreadCredentials"),
        .testTarget(
            name: "LoopdClientTests",
            dependencies: [
                "LoopdClient", "LoopdCore", "LoopdProtocol", "loopd", "CThreadCredentials",
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict),
    ]
)
