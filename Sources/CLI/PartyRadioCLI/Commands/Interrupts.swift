import Dispatch
import Foundation
import Glibc
import PartyRadioCore
import PartyRadioNode

/// Turns SIGINT and SIGTERM into a `quit` for the node, so it says goodbye before exiting.
final class Interrupts {
    private let sources: [any DispatchSourceSignal]

    init(inbox: Inbox<NodeInput>) {
        sources = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { inbox.push(.quit) }
            source.resume()
            return source
        }
    }
}

/// Turns SIGHUP into a library reload for the DJ (what `systemctl reload partyradio-dj` sends).
final class LibraryReloadSignal {
    private let source: any DispatchSourceSignal

    init(_ node: DJNode) {
        signal(SIGHUP, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler { node.reloadLibrary() }
        source.resume()
    }
}

/// Reads a node's controls from stdin on a thread of its own: single keys on a terminal (raw
/// mode, restored on exit; ``TerminalKeys``), otherwise one command per line
/// (``DJControl/parse(line:)``, ``ListenerControl/parse(line:)``; a line it cannot take is a
/// warning). End of input is not a quit: a node started from a script with stdin closed keeps
/// playing until a signal. The end of a terminal is: it hung up.
final class ControlReader {
    /// Whose controls: the DJ's or a listener's.
    enum Role: Sendable { case dj, listener }

    private var savedTerminal = termios()
    private let isTerminal: Bool
    private let isInBackground: Bool

    init(_ role: Role, inbox: Inbox<NodeInput>, reporter: any NodeReporter) {
        let onTerminal = isatty(STDIN_FILENO) == 1
        isTerminal = onTerminal
        // In a shell's background (`partyradio listen &`) the terminal is the shell's: changing its
        // mode or reading it would stop this process (SIGTTOU, SIGTTIN). No controls then.
        if onTerminal && tcgetpgrp(STDIN_FILENO) != getpgrp() {
            isInBackground = true
            return
        }
        isInBackground = false
        if isTerminal {
            tcgetattr(STDIN_FILENO, &savedTerminal)
            var raw = savedTerminal
            // No line editing and no echo: a key acts at once, and nothing typed lands in the view.
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        }
        let terminal = isTerminal
        let thread = Thread {
            if terminal { Self.readKeys(role, inbox) } else { Self.readLines(role, inbox, reporter: reporter) }
        }
        thread.start()
    }

    /// Puts the terminal back as it was.
    func restore() {
        if isTerminal && !isInBackground { tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminal) }
    }

    /// The input a control stands for: a quit is the node's own.
    static func input(_ control: DJControl) -> NodeInput { control == .quit ? .quit : .djControl(control) }
    static func input(_ control: ListenerControl) -> NodeInput {
        control == .quit ? .quit : .listenerControl(control)
    }

    /// Reads keys until the terminal is gone. In raw mode no key ends the input (Ctrl-D is a byte
    /// like any other), so an end of input is the terminal hanging up — its window closed, the
    /// ssh session or the tmux session gone — and the node quits. SIGHUP alone would not do: it
    /// is the DJ's library reload, and a DJ whose window was closed used to play on unseen,
    /// holding its name.
    private static func readKeys(_ role: Role, _ inbox: Inbox<NodeInput>) {
        var byte: UInt8 = 0
        var djKeys = TerminalKeys.DJ()
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { break }
            switch role {
            case .dj: if let control = djKeys.control(for: byte) { inbox.push(input(control)) }
            case .listener: if let control = TerminalKeys.listener(byte) { inbox.push(input(control)) }
            }
        }
        inbox.push(.quit)
    }

    private static func readLines(_ role: Role, _ inbox: Inbox<NodeInput>, reporter: any NodeReporter) {
        while let line = Swift.readLine() {
            if line.trimmingWhitespace().isEmpty { continue }
            do throws(ControlError) {
                switch role {
                case .dj: inbox.push(input(try DJControl.parse(line: line)))
                case .listener: inbox.push(input(try ListenerControl.parse(line: line)))
                }
            } catch {
                reporter.report(.warning(error.message))
            }
        }
    }
}
