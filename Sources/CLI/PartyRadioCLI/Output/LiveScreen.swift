import Dispatch
import Glibc
import Synchronization

/// The owner of the terminal while a live view is on it: every byte that reaches the screen then
/// goes through here, so the view always knows what it drew. A frame replaces the last one
/// (``show(_:)``); any other text — an event's line, a warning, a `-v` log line, an error — is
/// printed above the view (``print(_:to:)``: erase the view, print, draw it again); a resize
/// (SIGWINCH) draws it again for the new size. What to write is worked out by ``LiveFrame``.
final class LiveScreen: Sendable {
    private let frame = Mutex(LiveFrame())
    private let write: @Sendable (String, Console.Stream) -> Void
    private let size: @Sendable () -> TerminalSize

    /// A screen that writes with `write` and asks `size` for the terminal's size before each drawing.
    init(
        size: @escaping @Sendable () -> TerminalSize,
        write: @escaping @Sendable (_ text: String, _ stream: Console.Stream) -> Void
    ) {
        self.size = size
        self.write = write
    }

    /// The screen for `console`: this process's terminal for ``Console/standard`` (see
    /// ``attach()``), else one that writes to the console, 80 × 24 (tests).
    static func make(for console: Console) -> LiveScreen {
        guard console.isProcessTerminal else {
            return LiveScreen(
                size: { TerminalSize(columns: 80, rows: 24) }, write: { console.write($0, to: $1) })
        }
        return LiveScreen(
            size: { LiveScreen.terminalSize() }, write: { DescriptorOutput.writeDirectly($0, to: $1) })
    }

    /// Shows `sections` in place of the last frame.
    func show(_ sections: [LiveSection]) {
        frame.withLock { frame in
            let out = frame.show(sections, size: size())
            if !out.isEmpty { write(out, .out) }
        }
    }

    /// Prints `text` (one or more lines) above the view, on `stream`, and draws the view again below it.
    func print(_ text: String, to stream: Console.Stream = .out) {
        frame.withLock { frame in
            let now = size()
            let erase = frame.erase(size: now)
            // Every line ends with CR LF: the view below starts at the first column whatever the
            // terminal's output mode.
            let lines = text.replacing("\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
            let line = (text.hasSuffix("\n") ? lines.dropLast() : lines[...]).joined(separator: "\r\n") + "\r\n"
            if stream == .out {
                write(erase + line + frame.redraw(size: now), .out)
            } else {
                write(erase, .out)
                write(line, stream)
                write(frame.redraw(size: now), .out)
            }
        }
    }

    /// Draws the view again for the terminal's size now (after SIGWINCH).
    func resized() {
        frame.withLock { frame in
            let out = frame.show(frame.sections, size: size())
            if !out.isEmpty { write(out, .out) }
        }
    }

    // MARK: This process's terminal

    /// The screen attached to this process's terminal, which SIGWINCH redraws.
    private static let attached = Mutex<LiveScreen?>(nil)
    private static let resizeSignal = Mutex<(any DispatchSourceSignal)?>(nil)
    /// Descriptor 2 read through a pipe while attached (when it is the terminal).
    private static let capture = Mutex<StderrCapture?>(nil)

    /// Makes this screen the owner of stdout and stderr (when stderr is the terminal too): until
    /// ``detach()``, whatever else this process writes there is printed above the view, what C
    /// libraries write to descriptor 2 as well (``StderrCapture``). A terminal resize draws the
    /// view again.
    func attach() {
        let stderrIsTerminal = isatty(STDERR_FILENO) == 1
        DescriptorOutput.setOwner { [self] text, stream in
            if stream == .err && !stderrIsTerminal {
                DescriptorOutput.writeDirectly(text, to: .err)
            } else {
                self.print(text, to: stream)
            }
        }
        Self.attached.withLock { $0 = self }
        if stderrIsTerminal { Self.capture.withLock { if $0 == nil { $0 = StderrCapture() } } }
        Self.resizeSignal.withLock { source in
            guard source == nil else { return }
            signal(SIGWINCH, SIG_IGN)
            let made = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global())
            made.setEventHandler { LiveScreen.attached.withLock { $0 }?.resized() }
            made.resume()
            source = made
        }
    }

    /// Gives stdout and stderr back: the last frame stays on screen, and what is written next goes
    /// below it.
    func detach() {
        Self.capture.withLock { capture in
            capture?.end()
            capture = nil
        }
        DescriptorOutput.setOwner(nil)
        Self.attached.withLock { screen in if screen === self { screen = nil } }
    }

    /// The size of the terminal on stdout (80 × 24 when it has none).
    static func terminalSize() -> TerminalSize {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else {
            return TerminalSize(columns: 80, rows: 24)
        }
        return TerminalSize(columns: Int(size.ws_col), rows: Int(size.ws_row))
    }
}
