// libFuzzer target for the configuration parser (docs/RELIABILITY.md, "Fuzzing").
//
// Each input is the text of a loopd.toml. The target checks that
// `ConfigLoader.parse(_:origin:)`, and so loopd's own TOML parser
// (the TOML module), never traps, hangs or leaks and that:
// - it is deterministic (a second parse gives the same config or error);
// - a refusal names the origin, and a refused setting names its key in one
//   line (keys and values are quoted back with control characters escaped);
// - a syntax error has a 1-based line and column inside the text;
// - a raw NUL byte is refused (TOML allows no control character but tab
//   outside strings, nor unescaped inside them), and a `\u0000` escape never
//   reaches an accepted config;
// - an accepted config holds what the loader promises: 1 to 256 uniquely
//   named workers (none "any", no "common" mode), limits in their documented
//   ranges, exec programs and working directories as absolute paths.
//
// Built with `-sanitize=fuzzer` and `-D LOOPD_LIBFUZZER` (Fuzz/run.sh), libFuzzer
// supplies `main`; in an ordinary build the `@main` below replays files
// instead: `FuzzConfigParser Fuzz/corpus/FuzzConfigParser/*`.
import Glibc
import LoopdCore
import FuzzReplay

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    let first = Result { () throws(ConfigError) in try ConfigLoader.parse(text, origin: "<fuzz>") }
    let second = Result { () throws(ConfigError) in try ConfigLoader.parse(text, origin: "<fuzz>") }
    precondition(first == second, "two parses of the same text differ")
    switch first {
    case .success(let config):
        precondition(!bytes.contains(0), "a config with a raw NUL byte was accepted")
        check(config)
    case .failure(let error):
        precondition(error.origin == "<fuzz>" && error.description.hasPrefix("<fuzz>"), "the error lost its origin: \(error)")
        switch error {
        case .invalid(_, let key, _):
            precondition(!key.isEmpty, "an invalid setting without a key: \(error)")
            precondition(!error.description.contains("\n"), "a setting's error spans lines: \(error)")
        case .syntax(_, let line, let column, let message):
            let lines = text.utf8.count { $0 == 0x0A } + 1
            precondition((1...lines).contains(line) && column >= 1, "a syntax error outside the text: \(error)")
            precondition(!message.isEmpty && !message.contains("\n"), "a syntax error's message spans lines: \(error)")
        case .unreadable:
            preconditionFailure("parse reported an unreadable file: \(error)")
        }
    }
    return 0
}

/// What every accepted config guarantees (Config/loopd.toml documents each range).
private func check(_ config: DaemonConfig) {
    precondition((1...256).contains(config.workers.count), "\(config.workers.count) workers")
    precondition(Set(config.workers.map(\.name)).count == config.workers.count, "duplicate worker names")
    for worker in config.workers {
        precondition(isName(worker.name) && worker.name != "any", "bad worker name \(worker.name)")
        precondition(isName(worker.mode) && worker.mode != "common", "bad mode \(worker.mode)")
    }
    let limits = config.limits
    precondition((256...16_777_216).contains(limits.maxLineBytes), "max_line_bytes \(limits.maxLineBytes)")
    precondition((1...100_000).contains(limits.maxConnections), "max_connections \(limits.maxConnections)")
    precondition((1...10_000_000).contains(limits.maxQueuedJobsPerWorker), "max_queued_jobs_per_worker")
    precondition((4_096...1_073_741_824).contains(limits.maxPendingReplyBytes), "max_pending_reply_bytes")
    precondition(config.server.socketMode <= 0o777, "socket_mode \(config.server.socketMode)")
    precondition(config.server.socketPath.utf8.count <= 107, "socket path too long")
    precondition((100...3_600_000).contains(config.server.stallThresholdMs), "stall_threshold_ms")
    precondition((0...3_600_000).contains(config.server.shutdownGraceMs), "shutdown_grace_ms")
    precondition((0...31_536_000).contains(config.journal.retentionSeconds), "retention_seconds")
    for (name, action) in config.actions {
        precondition(isName(name), "bad action name \(name)")
        guard let exec = action.exec else {
            precondition(DaemonConfig.builtinActionNames.contains(name), "\(name) is neither built in nor exec")
            continue
        }
        precondition(!DaemonConfig.builtinActionNames.contains(name), "exec action \(name) shadows a built-in")
        precondition(exec.argv.first?.hasPrefix("/") == true, "\(name): argv[0] is not absolute")
        precondition(exec.cwd.hasPrefix("/"), "\(name): cwd is not absolute")
        precondition((0...256).contains(exec.maxClientArgs), "\(name): max_client_args")
        precondition((1...86_400_000).contains(exec.timeoutMs), "\(name): timeout_ms")
        precondition((1...600_000).contains(exec.killGraceMs), "\(name): kill_grace_ms")
        precondition((0...16_777_216).contains(exec.outputCapBytes), "\(name): output_cap_bytes")
        precondition(!exec.argv.contains { $0.utf8.contains(0) }, "\(name): NUL in argv")
        precondition(!exec.env.contains { $0.key.isEmpty || $0.key.contains("=") }, "\(name): bad env name")
        precondition(!exec.env.contains { $0.key.utf8.contains(0) || $0.value.utf8.contains(0) }, "\(name): NUL in env")
    }
}

/// The worker/mode/action alphabet: 1 to 64 of A-Z a-z 0-9 _ . -
private func isName(_ s: String) -> Bool {
    (1...64).contains(s.utf8.count)
        && s.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: "_") || b == UInt8(ascii: ".") || b == UInt8(ascii: "-")
        }
}

#if !LOOPD_LIBFUZZER
/// Without libFuzzer: replays the files named on the command line.
@main enum Replay {
    static func main() { replayCorpusFiles(target: "FuzzConfigParser", fuzz) }
}
#endif
