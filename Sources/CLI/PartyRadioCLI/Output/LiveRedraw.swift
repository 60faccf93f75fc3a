import Glibc

/// Redraws a block of lines in place on a terminal, for every live view (`dj`, `listen`,
/// `stations --watch`): back to the top of the last drawing, clear to the end of the screen,
/// draw again. Lines are cut to the terminal's width, since a wrapped line would throw the
/// next redraw off by a line.
struct LiveRedraw {
    private var drawnLines = 0

    /// The bytes that replace the previous drawing with `lines`.
    mutating func frame(_ lines: [String], width: Int = LiveRedraw.terminalWidth()) -> String {
        var out = drawnLines > 0 ? "\u{1B}[\(drawnLines)F\u{1B}[J" : ""
        for line in lines { out += Self.fit(line, width: width) + "\r\n" }
        drawnLines = lines.count
        return out
    }

    /// `line`, cut with an ellipsis to fit in `width` columns.
    static func fit(_ line: String, width: Int) -> String {
        line.count < width ? line : String(line.prefix(max(1, width - 2))) + "…"
    }

    /// The terminal's width in columns (80 when stdout is not a terminal).
    static func terminalWidth() -> Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}
