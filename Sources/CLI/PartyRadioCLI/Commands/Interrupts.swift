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

/// Reads the DJ's controls from stdin on a thread of its own: single keys on a terminal (raw
/// mode, restored on exit), otherwise one command per line (``DJControl/parse(line:)``; a line it
/// cannot take is a warning). End of input is not a quit: a DJ started from a script with stdin
/// closed keeps playing until a signal.
final class ControlReader {
    private var savedTerminal = termios()
    private let isTerminal: Bool

    init(inbox: Inbox<NodeInput>, reporter: any NodeReporter) {
        isTerminal = isatty(STDIN_FILENO) == 1
        if isTerminal {
            tcgetattr(STDIN_FILENO, &savedTerminal)
            var raw = savedTerminal
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        }
        let terminal = isTerminal
        let thread = Thread {
            if terminal { Self.readKeys(inbox) } else { Self.readLines(inbox, reporter: reporter) }
        }
        thread.start()
    }

    /// Puts the terminal back as it was.
    func restore() {
        if isTerminal { tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminal) }
    }

    private static func readKeys(_ inbox: Inbox<NodeInput>) {
        var byte: UInt8 = 0
        var showingDJCode = false
        while read(STDIN_FILENO, &byte, 1) == 1 {
            let control: DJControl
            switch byte {
            case UInt8(ascii: "n"): control = .next
            case UInt8(ascii: "p"): control = .previous
            case UInt8(ascii: " "): control = .toggle
            case UInt8(ascii: "s"): control = .shuffle
            case UInt8(ascii: "r"): control = .setRepeat(nil)
            case UInt8(ascii: "+"), UInt8(ascii: "="): control = .volume(.by(10))
            case UInt8(ascii: "-"): control = .volume(.by(-10))
            case UInt8(ascii: "a"): control = .approve(.next)
            case UInt8(ascii: "d"): control = .drop(.next)
            case UInt8(ascii: "w"):
                showingDJCode.toggle()
                control = .qr(forDJ: showingDJCode)
            case UInt8(ascii: "q"):
                inbox.push(.quit)
                continue
            default: continue
            }
            inbox.push(.djControl(control))
        }
    }

    private static func readLines(_ inbox: Inbox<NodeInput>, reporter: any NodeReporter) {
        while let line = Swift.readLine() {
            if line.trimmingWhitespace().isEmpty { continue }
            do throws(ControlError) {
                let control = try DJControl.parse(line: line)
                inbox.push(control == .quit ? .quit : .djControl(control))
            } catch {
                reporter.report(.warning(error.message))
            }
        }
    }
}
