import Foundation
import Glibc

/// What C libraries write to descriptor 2 themselves, while a live view is on the terminal: PipeWire
/// and ALSA complain there as mpv tries its outputs. Written straight to the terminal, their lines
/// would land in the middle of the view and move the cursor under it, so that the next redraw
/// leaves a stale copy behind (seen in tmux). Meanwhile descriptor 2 is a pipe: a thread reads it
/// and hands each whole line to ``DescriptorOutput`` (above the view), and this process's own
/// stderr text goes to the terminal through a copy of the old descriptor 2.
final class StderrCapture: Sendable {
    private let terminal: Int32
    private let reader: Int32

    /// Descriptor 2 becomes the pipe; nil when it cannot (the view then goes on without).
    init?() {
        let terminal = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3)
        guard terminal >= 0 else { return nil }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            close(terminal)
            return nil
        }
        // The read end is this process's alone; the write end becomes descriptor 2 below.
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        // The write end becomes descriptor 2 (dup2 leaves it open across exec, as stderr is).
        guard dup2(ends[1], STDERR_FILENO) >= 0 else {
            close(terminal)
            close(ends[0])
            close(ends[1])
            return nil
        }
        close(ends[1])
        self.terminal = terminal
        reader = ends[0]
        DescriptorOutput.setErrorDescriptor(terminal)
        let thread = Thread { [reader] in Self.forward(reader) }
        thread.name = "partyradio.stderr"
        thread.start()
    }

    /// Puts descriptor 2 back on the terminal. The reader then reads to the pipe's end and hands
    /// on what is left, which goes to the terminal as it is (the view has let it go).
    func end() {
        DescriptorOutput.setErrorDescriptor(STDERR_FILENO)
        dup2(terminal, STDERR_FILENO)
        close(terminal)
    }

    /// Reads the pipe until every writer has closed it, handing on whole lines.
    private static func forward(_ reader: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            pending += buffer[..<count]
            if let lastNewline = pending.lastIndex(of: UInt8(ascii: "\n")) {
                DescriptorOutput.write(String(decoding: pending[...lastNewline], as: UTF8.self), to: .err)
                pending.removeSubrange(...lastNewline)
            }
        }
        if !pending.isEmpty { DescriptorOutput.write(String(decoding: pending, as: UTF8.self) + "\n", to: .err) }
        close(reader)
    }
}
