#if canImport(Glibc)
import Glibc
#endif

/// The ordinary-build `main` of every fuzz target: runs each file named on
/// the command line through `fuzz` once, so a target's corpus doubles as a
/// regression suite in any build (a libFuzzer build supplies its own main).
public func replayCorpusFiles(target: String, _ fuzz: (UnsafePointer<UInt8>, Int) -> CInt) {
    let files = CommandLine.arguments.dropFirst()
    if files.isEmpty { print("usage: \(target) FILE... (a libFuzzer build fuzzes instead; see Fuzz/run.sh)") }
    for path in files {
        guard let file = fopen(path, "rb") else { fatalError("cannot open \(path)") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while case let n = fread(&chunk, 1, chunk.count, file), n > 0 { bytes += chunk[0..<n] }
        fclose(file)
        // One spare byte, so even an empty input has an address to pass.
        bytes.append(0)
        _ = bytes.withUnsafeBufferPointer { fuzz($0.baseAddress.unsafelyUnwrapped, $0.count - 1) }
    }
    print("\(target): replayed \(files.count) inputs")
}
