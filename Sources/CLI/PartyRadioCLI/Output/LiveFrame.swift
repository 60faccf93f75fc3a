/// A terminal's size in columns and rows.
struct TerminalSize: Hashable, Sendable {
    var columns: Int
    var rows: Int
}

/// One part of a live view: its lines, and a shorter form for a terminal too short for them all
/// (a QR code gives way to its link, a long list to its first lines).
struct LiveSection: Hashable, Sendable {
    var lines: [String]
    var compact: [String]

    init(_ lines: [String], compact: [String]? = nil) {
        self.lines = lines
        self.compact = compact ?? lines
    }
}

/// The pure part of every live view (`dj`, `listen`, `stations --watch`): which lines fit the
/// terminal, and the bytes that put them on screen in place of the last drawing.
///
/// The view is a block at the bottom of what the terminal shows, and the cursor rests at the start
/// of the row below it. It never wraps (each line is cut to one column less than the width) and is
/// never taller than the terminal less one row, so it takes exactly one row per line; it remembers
/// every line it drew and so always erases exactly what it drew:
/// - a new frame rewrites only the rows that changed, and erases what is left below a shorter one;
/// - a line printed above the view (``erase(size:)``, the line, ``redraw(size:)``) scrolls up with
///   the terminal's own output and is never part of a frame;
/// - after a resize the whole block is erased and drawn again. A terminal that reflows its lines
///   when it narrows (tmux, VTE, kitty) has split each drawn line wider than the new width into
///   several rows: the erase counts those rows. One that cuts them instead (xterm) loses as many
///   rows of older output above the view, never leaves a stale one.
struct LiveFrame {
    /// The lines on screen now, as drawn (fitted), top first.
    private(set) var drawn: [String] = []
    /// The size they were drawn for; nil before the first drawing.
    private(set) var drawnSize: TerminalSize?
    /// The sections last shown: drawn again after a line printed above, or a resize.
    private(set) var sections: [LiveSection] = []

    /// The bytes that show `sections` in place of the last drawing.
    mutating func show(_ sections: [LiveSection], size: TerminalSize) -> String {
        self.sections = sections
        let lines = Self.layout(sections, size: size)
        guard drawnSize == size else { return erase(size: size) + draw(lines, size: size) }
        let out = Self.unwrapped(Self.diff(from: drawn, to: lines))
        drawn = lines
        return out
    }

    /// The bytes that erase the view and leave the cursor where its top row was, for a line to be
    /// printed there; ``redraw(size:)`` then draws the view again below it.
    mutating func erase(size: TerminalSize) -> String {
        guard let drawnSize else { return "" }
        let rows =
            size.columns < drawnSize.columns
            ? drawn.reduce(0) { $0 + Self.rows(columns: TextWidth.columns($1), width: size.columns) } : drawn.count
        drawn = []
        self.drawnSize = nil
        return rows > 0 ? "\r\u{1B}[\(rows)A" + Self.eraseBelowTopRow : "\r\u{1B}[2K"
    }

    /// Erases the row the cursor is on and every row below it, the cursor staying, with a row
    /// below to go to. Not "erase below" (`ESC[J`) alone: at the screen's top left corner, where
    /// the view's top row is when the view fills the screen, tmux (`scroll-on-clear`, on by
    /// default) takes that for clearing the screen and keeps a copy of it in its scrollback. So the
    /// top row is cleared on its own, and the rest from the row below it.
    static let eraseBelowTopRow = "\u{1B}[2K\u{1B}[1B\u{1B}[J\u{1B}[1A"

    /// The bytes that draw the last sections again after ``erase(size:)``.
    mutating func redraw(size: TerminalSize) -> String {
        draw(Self.layout(sections, size: size), size: size)
    }

    private mutating func draw(_ lines: [String], size: TerminalSize) -> String {
        drawn = lines
        drawnSize = size
        return Self.unwrapped(lines.map { $0 + "\r\n" }.joined())
    }

    /// `text` with the terminal's automatic wrap off (DECAWM): a frame drawn for one width and
    /// read by the terminal after it has narrowed (a resize racing a redraw: the bytes were on their
    /// way) is cut at the edge instead of wrapping into rows that no erase counts. Lines printed
    /// above the view still wrap.
    static func unwrapped(_ text: String) -> String {
        text.isEmpty ? text : "\u{1B}[?7l" + text + "\u{1B}[?7h"
    }

    /// The lines of a frame: each section whole, or compact (from the last section up) while the
    /// whole is taller than the terminal less one row; then cut to that height, and each line cut to
    /// one column less than the width.
    static func layout(_ sections: [LiveSection], size: TerminalSize) -> [String] {
        let height = max(1, size.rows - 1)
        var chosen = sections.map(\.lines)
        var index = sections.count - 1
        while chosen.reduce(0, { $0 + $1.count }) > height && index >= 0 {
            chosen[index] = sections[index].compact
            index -= 1
        }
        var lines = chosen.flatMap { $0 }
        if lines.count > height {
            let hidden = lines.count - height + 1
            lines = Array(lines.prefix(height - 1)) + ["… \(hidden) more lines (a taller terminal shows them)"]
        }
        return lines.map { TextWidth.fit($0, columns: max(1, size.columns - 1)) }
    }

    /// The rows a line of `columns` columns takes on a terminal `width` columns wide that reflows it.
    static func rows(columns: Int, width: Int) -> Int {
        max(1, (columns + max(1, width) - 1) / max(1, width))
    }

    /// The bytes that turn the drawn `old` lines into `new` (the same size): the rows that differ
    /// are cleared and rewritten, new rows are added below, rows left over are erased.
    static func diff(from old: [String], to new: [String]) -> String {
        guard old != new else { return "" }
        var out = ""
        var row = old.count  // the cursor: at the start of the row below the block
        func move(to target: Int) {
            out += "\r"
            if target < row { out += "\u{1B}[\(row - target)A" }
            if target > row { out += "\u{1B}[\(target - row)B" }
            row = target
        }
        let common = min(old.count, new.count)
        for index in 0..<common where old[index] != new[index] {
            move(to: index)
            out += "\u{1B}[2K" + new[index]
        }
        if new.count > old.count {
            move(to: old.count)
            for line in new[old.count...] { out += line + "\r\n" }
        } else {
            move(to: new.count)
            // Below the new frame's first row the cursor is never at the screen's top left.
            if new.count < old.count { out += new.isEmpty ? eraseBelowTopRow : "\u{1B}[J" }
        }
        return out
    }
}
