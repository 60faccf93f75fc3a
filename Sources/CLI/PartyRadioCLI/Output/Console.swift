import Glibc

/// Where every command writes: results to stdout; errors, warnings and log lines to stderr.
///
/// ``standard`` writes to this process's descriptors. Tests make their own with
/// ``init(isTerminal:_:)`` and collect the text, for the catalog commands and the nodes alike.
public struct Console: Sendable {
    /// One of the two output streams.
    public enum Stream: Sendable {
        case out, err
    }

    /// Whether stdout is a terminal: the live views redraw in place only there.
    public let isTerminal: Bool
    /// Whether this is ``standard``: a live view then owns this process's terminal (``LiveScreen``).
    let isProcessTerminal: Bool
    private let sink: @Sendable (Stream, String) -> Void

    /// A console that hands each write to `sink`: the text exactly as written, newline included.
    public init(isTerminal: Bool = false, _ sink: @escaping @Sendable (_ stream: Stream, _ text: String) -> Void) {
        self.isTerminal = isTerminal
        self.sink = sink
        isProcessTerminal = false
    }

    private init(processTerminal: Bool) {
        isTerminal = processTerminal
        isProcessTerminal = true
        sink = { stream, text in DescriptorOutput.write(text, to: stream) }
    }

    /// stdout and stderr of this process, each write whole (see ``DescriptorOutput``).
    public static let standard = Console(processTerminal: isatty(STDOUT_FILENO) == 1)

    /// Writes `text` as it is (a live view's escape sequences, a help page).
    public func write(_ text: String, to stream: Stream) { sink(stream, text) }

    /// One line of results.
    public func out(_ line: String) { sink(.out, line + "\n") }

    /// One line for the user on stderr (a warning, a note).
    public func err(_ line: String) { sink(.err, line + "\n") }

    /// An error the way every command prints one: `Error: …`, then the hint (for usage errors,
    /// `See 'partyradio <command> --help'.`), in one write.
    public func error(_ message: String, hint: String? = nil) {
        sink(.err, "Error: \(message)\n" + (hint.map { $0 + "\n" } ?? ""))
    }
}
