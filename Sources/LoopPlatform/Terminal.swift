import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// The terminal calls of a full-screen client (`loopctl top`): whether a
/// descriptor is a terminal, its size, raw input and the way back. Any
/// thread; nothing here keeps state (the caller keeps the saved settings).
public enum Terminal {
    /// A terminal's size in character cells.
    public struct Size: Sendable, Equatable {
        /// Lines.
        public var rows: Int
        /// Cells per line.
        public var columns: Int

        /// Creates a size.
        public init(rows: Int, columns: Int) {
            self.rows = rows
            self.columns = columns
        }
    }

    /// A terminal's line settings as they were before `enterRawInput`,
    /// to give back with `restore`.
    public struct Settings: Sendable {
        fileprivate var attributes: termios
    }

    /// Whether `fd` is a terminal (isatty(3)).
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// The size of the terminal behind `fd` (ioctl `TIOCGWINSZ`); nil when
    /// `fd` is not a terminal, or is a pseudo-terminal nobody gave a size
    /// (0 × 0).
    public static func size(_ fd: Int32) -> Size? {
        var window = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &window) == 0, window.ws_row > 0, window.ws_col > 0 else { return nil }
        return Size(rows: Int(window.ws_row), columns: Int(window.ws_col))
    }

    /// Puts the terminal behind `fd` into raw input: no echo, no line
    /// editing, no signals from keys (Ctrl-C arrives as byte 3), no flow
    /// control (Ctrl-S is a byte too), CR not turned into NL; and reads
    /// that return at once with whatever is there (`VMIN` 0, `VTIME` 0), so
    /// input never blocks without setting `O_NONBLOCK`, a flag the shell
    /// shares the open terminal with. Output is left alone (`\n` still
    /// moves to the start of the next line). Returns the settings before,
    /// for `restore`; keys typed before the change are discarded.
    public static func enterRawInput(_ fd: Int32) throws(PlatformError) -> Settings {
        var attributes = termios()
        _ = try retryingInterrupts("tcgetattr") { tcgetattr(fd, &attributes) }
        let saved = Settings(attributes: attributes)
        attributes.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        attributes.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR | IGNCR)
        withUnsafeMutableBytes(of: &attributes.c_cc) { cells in
            cells[Int(VMIN)] = 0
            cells[Int(VTIME)] = 0
        }
        _ = try retryingInterrupts("tcsetattr") { tcsetattr(fd, TCSAFLUSH, &attributes) }
        return saved
    }

    /// Gives the terminal behind `fd` back `settings`, once the output
    /// written so far has gone out (`TCSADRAIN`). Best effort: a terminal
    /// that is gone has nobody left to restore for.
    public static func restore(_ fd: Int32, _ settings: Settings) {
        var attributes = settings.attributes
        _ = try? retryingInterrupts("tcsetattr") { tcsetattr(fd, TCSADRAIN, &attributes) }
    }
}

/// Signals turned into input (the self-pipe trick): while it is open, each
/// of its signals writes its number to a pipe, from whichever thread the
/// signal hits, instead of taking its default action; a poll(2) loop
/// watches `descriptor` and reads them with `take()`. So a program whose
/// threads it did not all start itself (an event loop's) can still react to
/// SIGTERM in one place.
///
/// Opening it also unblocks its signals in the opening thread: a process
/// may inherit a mask that blocks them (a child of a thread that blocks
/// everything), and a blocked SIGTERM would never be seen.
///
/// One per process at a time, opened and closed on the same thread.
/// `close()` (or deinit) gives that thread its mask back and the signals
/// their default actions.
public final class SignalPipe {
    /// The pipe's read end: readable when a signal came. Close-on-exec and
    /// non-blocking.
    public let descriptor: Int32
    /// The signals routed here.
    public let signals: [Int32]
    /// False once closed.
    private var isOpen = true

    /// Routes `signals` to a new pipe. Throws `EBUSY` when another
    /// `SignalPipe` of the process is open.
    public init(routing signals: [Int32]) throws(PlatformError) {
        self.signals = signals
        descriptor = try retryingInterrupts("signal pipe") {
            signals.withUnsafeBufferPointer { cloop_signal_pipe_open($0.baseAddress, Int32($0.count)) }
        }
    }

    deinit { close() }

    /// The signals that came since the last call, each number once, in
    /// the order they first came; empty when none did.
    public func take() -> [Int32] {
        var seen: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while isOpen, case .bytes(let count) = buffer.withUnsafeMutableBytes({ Descriptor.read(descriptor, into: $0) }) {
            for byte in buffer[..<count] where !seen.contains(Int32(byte)) { seen.append(Int32(byte)) }
        }
        return seen
    }

    /// Puts the signals back to their default actions and closes the pipe.
    /// Idempotent.
    public func close() {
        guard isOpen else { return }
        isOpen = false
        signals.withUnsafeBufferPointer { cloop_signal_pipe_close(descriptor, $0.baseAddress, Int32($0.count)) }
    }
}
