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
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Only for PGClientBench and PGSizeProbe: the PostgreSQL client the fleet did not choose.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
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
        // LoopdCore's PostgresConnection (libpq on the loop) beside postgres-nio hopping to a loop.
        .executableTarget(
            name: "PGClientBench",
            dependencies: [
                .product(name: "LoopdCore", package: "loopd"),
                .product(name: "LoopRuntime", package: "loopd"),
                .product(name: "LoopPlatform", package: "loopd"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "PGClientBench",
            swiftSettings: strict),
        // loopd's own main with postgres-nio linked in and used: what the daemon's binary would weigh
        // with it (PGClientBench's README section compares it with loopd).
        .executableTarget(
            name: "PGSizeProbe",
            dependencies: [
                .product(name: "LoopdCore", package: "loopd"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "PGSizeProbe",
            swiftSettings: strict),
    ]
)
