// swift-tools-version:6.0
// A package outside loopd that depends on it the way any user's package
// does: by URL, through its LoopRuntime product. `make consumer` points it at
// a clone of this repository (LOOPD_PACKAGE_URL=file://…) and runs it, so a
// change that breaks outside users (a missing `public`, unsafe flags in a
// product's target, a renamed product) fails CI.
import PackageDescription

let loopdURL = Context.environment["LOOPD_PACKAGE_URL"] ?? "https://github.com/loopd/loopd.git"

let package = Package(
    name: "consumer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: loopdURL, branch: "main"),
    ],
    targets: [
        .executableTarget(
            name: "consumer",
            dependencies: [.product(name: "LoopRuntime", package: "loopd")],
            swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
