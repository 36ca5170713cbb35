import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The terminal while `loopctl top` runs in it, and the way back: the
/// alternate screen with the cursor hidden, keys in raw mode, and SIGINT,
/// SIGTERM, SIGHUP, SIGQUIT and SIGWINCH turned into events. `leave()`
/// (or deinit) gives everything back, in the reverse order: the main
/// screen and the cursor, the line settings, the signals' default actions.
///
/// Standard output must be a terminal; standard input may not be one
/// (`loopctl top < /dev/null`), and then no key is read. One thread.
final class TopTerminal {
    /// What happened while `wait` waited.
    enum Event: Sendable, Equatable {
        /// Keys were pressed.
        case keys([TopKey])
        /// The terminal changed size (SIGWINCH).
        case resized
        /// A signal asked loopctl to end (SIGINT, SIGTERM, SIGHUP, SIGQUIT).
        case stop(signal: Int32)
        /// Standard input hung up or failed: the terminal is gone.
        case inputGone
    }

    private static let input: Int32 = 0
    private static let output: Int32 = 1
    /// The size drawn for when the terminal cannot say its own.
    static let fallbackSize = ScreenSize(rows: 24, columns: 80)

    private let signals: SignalPipe
    /// The line settings to give back; nil when input is not a terminal.
    private let savedInput: Terminal.Settings?
    /// The signal pipe (index 0) and, when it is a terminal, input (index 1).
    private var readiness: PollSet
    private var isActive = true

    /// Takes the terminal over. The signals are routed first, so a SIGTERM
    /// at any later moment still leads to `leave()`.
    init() throws(PlatformError) {
        signals = try SignalPipe(routing: [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH])
        if Terminal.isTerminal(Self.input) {
            do {
                savedInput = try Terminal.enterRawInput(Self.input)
            } catch {
                signals.close()
                throw error
            }
        } else {
            savedInput = nil
        }
        readiness = PollSet(savedInput == nil ? [signals.descriptor] : [signals.descriptor, Self.input], interest: .readable)
        writeStandard(Self.output, ControlSequence.enter)
    }

    deinit { leave() }

    /// Gives the terminal back as it was. Idempotent.
    func leave() {
        guard isActive else { return }
        isActive = false
        writeStandard(Self.output, ControlSequence.leave)
        if let savedInput { Terminal.restore(Self.input, savedInput) }
        signals.close()
    }

    /// The terminal's size now (`TIOCGWINSZ`), or `fallbackSize`.
    var size: ScreenSize {
        Terminal.size(Self.output).map { ScreenSize(rows: $0.rows, columns: $0.columns) } ?? Self.fallbackSize
    }

    /// Draws `lines` over the previous frame.
    func draw(_ lines: [TopLine], size: ScreenSize) {
        writeStandard(Self.output, Self.frame(lines, size: size))
    }

    /// Waits until a key or a signal comes, or `milliseconds` pass (then
    /// no event): poll(2) of the signal pipe and standard input.
    func wait(milliseconds: Int64) throws(PlatformError) -> [Event] {
        guard try readiness.wait(timeoutMilliseconds: Int32(clamping: max(0, milliseconds))) > 0 else { return [] }
        var events: [Event] = []
        if readiness.isReady(0) {
            events += signals.take().map { $0 == SIGWINCH ? .resized : .stop(signal: $0) }
        }
        if readiness.count > 1, readiness.isReady(1) {
            var bytes = [UInt8](repeating: 0, count: 256)
            switch bytes.withUnsafeMutableBytes({ Descriptor.read(Self.input, into: $0) }) {
            case .bytes(let count): events.append(.keys(TopKey.keys(in: bytes[..<count])))
            case .wouldBlock: break
            // Ready with nothing to read (VMIN 0 reports no end of file
            // otherwise): hung up, as an error is.
            case .endOfFile, .failed: events.append(.inputGone)
            }
        }
        return events
    }

    /// The bytes that draw `lines` on a screen of `size` without clearing
    /// it first (no flicker): each line at the start of its row, erasing
    /// what is left of the row after it, then the rest of the screen below
    /// the last. A line as wide as the screen is not followed by an erase:
    /// with the cursor parked on the last column, the erase would take the
    /// line's last character. Lines must already fit the width.
    static func frame(_ lines: [TopLine], size: ScreenSize) -> String {
        var out = ""
        for (row, line) in lines.prefix(size.rows).enumerated() {
            out += ControlSequence.moveTo(row: row + 1)
            var text = line.text
            if line.style == .columns {
                text += String(repeating: " ", count: max(0, size.columns - TopText.cells(text)))
            }
            if let style = ControlSequence.style(line.style) {
                out += style + text + ControlSequence.resetStyle
            } else {
                out += text
            }
            if TopText.cells(text) < size.columns { out += ControlSequence.eraseToEndOfLine }
        }
        if lines.count < size.rows {
            out += ControlSequence.moveTo(row: lines.count + 1) + ControlSequence.eraseToEndOfScreen
        }
        return out
    }
}

/// The few VT100/xterm sequences `loopctl top` writes.
enum ControlSequence {
    /// The alternate screen (saving the cursor), the cursor hidden, the
    /// screen cleared once.
    static let enter = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J"
    /// Plain text, the cursor shown, the main screen back as it was.
    static let leave = "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"
    static let eraseToEndOfLine = "\u{1B}[K"
    static let eraseToEndOfScreen = "\u{1B}[J"
    static let resetStyle = "\u{1B}[0m"

    /// The cursor to the first column of `row` (from 1).
    static func moveTo(row: Int) -> String { "\u{1B}[\(row);1H" }

    /// The look of a style: bold, reverse, bold red, faint; nil for plain.
    static func style(_ style: TopLine.Style) -> String? {
        switch style {
        case .plain: nil
        case .title: "\u{1B}[1m"
        case .columns: "\u{1B}[7m"
        case .alert: "\u{1B}[1;31m"
        case .dim: "\u{1B}[2m"
        }
    }
}
