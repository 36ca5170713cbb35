import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// `echo`: returns its arguments joined by one space.
struct EchoAction: JobAction {
    func start(_ context: ActionContext) {
        context.complete(.success(.object([("output", .string(context.args.joined(separator: " ")))])))
    }
}

/// `noop`: does nothing, successfully.
struct NoopAction: JobAction {
    func validate(args: [String]) throws(ProtocolError) {
        guard args.isEmpty else { throw ProtocolError(.badRequest, "noop takes no arguments") }
    }

    func start(_ context: ActionContext) { context.complete(.success(.object([]))) }
}

/// `fail`: always fails (its arguments become the message).
struct FailAction: JobAction {
    func start(_ context: ActionContext) {
        let message = context.args.isEmpty ? "the fail action always fails" : context.args.joined(separator: " ")
        context.complete(.failure(ProtocolError(.jobFailed, message), result: .object([])))
    }
}

/// Parses the one millisecond argument of `sleep` and `stall`.
private func milliseconds(_ args: [String], action: String) throws(ProtocolError) -> Int64 {
    guard args.count == 1, let ms = Int64(args[0]), (0...RequestLimits.maxDelayMs).contains(ms) else {
        throw ProtocolError(.badRequest, "\(action) takes one argument: milliseconds, 0...\(RequestLimits.maxDelayMs)")
    }
    return ms
}

/// `sleep MS`: completes after MS milliseconds on a timer; the worker's loop
/// keeps turning meanwhile.
struct SleepAction: JobAction {
    func validate(args: [String]) throws(ProtocolError) { _ = try milliseconds(args, action: "sleep") }

    func start(_ context: ActionContext) {
        let ms = (try? milliseconds(context.args, action: "sleep")) ?? 0
        let timer = LoopTimer(after: .milliseconds(ms)) { _ in
            context.complete(.success(.object([("slept_ms", .integer(ms))])))
        }
        // A timeout or a cancel ends it at once, with the reason given.
        let stop = {
            timer.invalidate()
            context.complete(.failure(context.stopReason ?? ProtocolError(.timeout, "sleep timed out"), result: .object([])))
        }
        context.onTimeout = stop
        context.onCancel = stop
        context.loop.add(timer, forMode: .common)
    }
}

/// `stall MS` (debug actions only): blocks the worker's thread for MS
/// milliseconds, so its loop stops turning — for testing the watchdog.
struct StallAction: JobAction {
    func validate(args: [String]) throws(ProtocolError) { _ = try milliseconds(args, action: "stall") }

    func start(_ context: ActionContext) {
        let ms = (try? milliseconds(context.args, action: "stall")) ?? 0
        blockThread(milliseconds: ms)
        context.complete(.success(.object([("stalled_ms", .integer(ms))])))
    }
}
