import Synchronization

/// A small terminal for the live views' tests: it does what a terminal does with the bytes the
/// views write (printable text with autowrap and scrolling into history, CR, LF, cursor up/down,
/// erase line, erase below — from the top left corner, as tmux does, keeping the screen in the
/// scrollback; automatic wrap on and off; colours are ignored), and resizes as tmux does (lines reflowed to the
/// new width) or as xterm does (lines cut). Its character widths are its own short table, not the
/// code's: 2 for the CJK and emoji the tests use, 1 for the rest.
struct VirtualTerminal {
    struct Row {
        /// One entry per column: a character, or "" for the second column of a wide one.
        var cells: [String] = []
        /// The line goes on in the next row (it was wrapped, not ended).
        var wrapped = false
        var text: String { cells.joined() }
    }

    private(set) var width: Int
    private(set) var height: Int
    let reflows: Bool
    /// History, then the screen: its last `height` rows.
    private(set) var grid: [Row]
    /// The cursor on the screen; `x == width` is a pending wrap.
    private(set) var x = 0
    private(set) var y = 0
    private var escape: String?
    /// DECAWM: off, a character at the right edge overwrites the last column instead of wrapping.
    private var autowrap = true

    static let wide: Set<Character> = ["界", "世", "🎸", "💬"]

    init(width: Int, height: Int, reflows: Bool = true) {
        self.width = width
        self.height = height
        self.reflows = reflows
        grid = Array(repeating: Row(), count: height)
    }

    private var top: Int { grid.count - height }

    /// The screen's rows, trailing spaces cut.
    var screen: [String] { grid[top...].map { trimmed($0.text) } }

    /// The columns each screen row uses.
    var screenWidths: [Int] { grid[top...].map(\.cells.count) }

    /// Every row, history first.
    var allRows: [String] { grid.map { trimmed($0.text) } }

    /// The lines as written: wrapped rows joined again, history first, blank rows left out.
    var lines: [String] {
        var out: [String] = []
        var current = ""
        for row in grid {
            current += row.text
            if !row.wrapped {
                out.append(trimmed(current))
                current = ""
            }
        }
        if !current.isEmpty { out.append(trimmed(current)) }
        return out.filter { !$0.isEmpty }
    }

    /// The cursor's row on the screen.
    var cursorRow: Int { y }

    mutating func feed(_ text: String) {
        for character in text {
            if var sequence = escape {
                sequence.append(character)
                if sequence == "[" || !(character.asciiValue.map { (0x40...0x7E).contains($0) } ?? false) {
                    escape = sequence
                } else {
                    escape = nil
                    perform(sequence)
                }
                continue
            }
            switch character {
            case "\u{1B}": escape = ""
            case "\r": x = 0
            case "\n": lineFeed()
            case "\r\n":
                x = 0
                lineFeed()
            default: put(character)
            }
        }
    }

    private mutating func put(_ character: Character) {
        let columns = Self.wide.contains(character) ? 2 : 1
        if x + columns > width && !autowrap {
            x = max(0, width - columns)
        } else if x + columns > width {
            grid[top + y].wrapped = true
            lineFeed()
            x = 0
        }
        var row = grid[top + y]
        while row.cells.count < x + columns { row.cells.append(" ") }
        row.cells[x] = String(character)
        if columns == 2 { row.cells[x + 1] = "" }
        grid[top + y] = row
        x += columns
    }

    private mutating func lineFeed() {
        if y == height - 1 {
            grid.append(Row())
        } else {
            y += 1
        }
    }

    private mutating func perform(_ sequence: String) {
        guard sequence.hasPrefix("["), let final = sequence.last else { return }
        if sequence == "[?7l" || sequence == "[?7h" {
            autowrap = sequence == "[?7h"
            return
        }
        let n = max(1, Int(sequence.dropFirst().dropLast()) ?? 1)
        switch final {
        case "A": y = max(0, y - n)
        case "B": y = min(height - 1, y + n)
        case "F":
            y = max(0, y - n)
            x = 0
        case "E":
            y = min(height - 1, y + n)
            x = 0
        case "K":
            grid[top + y] = Row()
        case "J":
            // tmux (`scroll-on-clear`): erasing below from the top left corner clears the screen,
            // and keeps what it showed in the scrollback.
            if reflows && x == 0 && y == 0 { grid.append(contentsOf: Array(repeating: Row(), count: height)) }
            grid[top + y].cells = Array(grid[top + y].cells.prefix(min(x, width)))
            grid[top + y].wrapped = false
            for index in (top + y + 1)..<grid.count { grid[index] = Row() }
        default: break  // colours
        }
        x = min(x, width - 1 + (final == "m" ? 1 : 0))
    }

    /// The terminal changes size: tmux reflows the lines to the new width, xterm cuts them.
    mutating func resize(width newWidth: Int, height newHeight: Int) {
        // The rows below the cursor are blank in every use here: dropped, then the screen is
        // filled from the bottom again.
        var rows = Array(grid[...(top + y)])
        var cursorRow = rows.count - 1
        var cursorX = x
        if reflows && newWidth != width {
            var reflowed: [Row] = []
            var logical: [String] = []
            var newCursor = (row: 0, x: 0)
            for (index, row) in rows.enumerated() {
                if index == cursorRow {
                    // The cells before the cursor, reflowed, end where the cursor is.
                    let offset = logical.count + min(cursorX, row.cells.count)
                    let before = Self.split(Array((logical + row.cells).prefix(offset)), width: newWidth)
                    newCursor = (reflowed.count + before.count - 1, before.last?.cells.count ?? 0)
                }
                logical += row.cells
                if !row.wrapped || index == rows.count - 1 {
                    reflowed += Self.split(logical, width: newWidth)
                    logical = []
                }
            }
            rows = reflowed
            cursorRow = newCursor.row
            cursorX = newCursor.x
            while rows.count <= cursorRow { rows.append(Row()) }
            rows = Array(rows.prefix(cursorRow + 1))
        } else if newWidth < width {
            rows = rows.map { Row(cells: Array($0.cells.prefix(newWidth)), wrapped: false) }
            cursorX = min(cursorX, newWidth - 1)
        }
        width = newWidth
        height = newHeight
        while rows.count < newHeight { rows.append(Row()) }
        grid = rows
        y = cursorRow - top
        x = cursorX
    }

    private static func split(_ cells: [String], width: Int) -> [Row] {
        var rows: [Row] = []
        var current: [String] = []
        var index = 0
        while index < cells.count {
            let columns = index + 1 < cells.count && cells[index + 1] == "" ? 2 : 1
            if current.count + columns > width {
                rows.append(Row(cells: current, wrapped: true))
                current = []
            }
            current += cells[index..<(index + columns)]
            index += columns
        }
        rows.append(Row(cells: current, wrapped: false))
        return rows
    }

    private func trimmed(_ text: String) -> String {
        var text = text
        while text.last == " " { text.removeLast() }
        return text
    }
}

/// A ``VirtualTerminal`` shared between a test and the writer it hands to the code under test.
final class SharedTerminal: Sendable {
    private let terminal: Mutex<VirtualTerminal>

    init(width: Int, height: Int, reflows: Bool = true) {
        terminal = Mutex(VirtualTerminal(width: width, height: height, reflows: reflows))
    }

    func feed(_ text: String) { terminal.withLock { $0.feed(text) } }
    func resize(width: Int, height: Int) { terminal.withLock { $0.resize(width: width, height: height) } }
    var state: VirtualTerminal { terminal.withLock { $0 } }
}
