/// How many terminal columns text takes, and text cut to a number of columns: what the live views
/// need so that a line never wraps (a wrapped line is a row the next redraw would not erase).
///
/// A character is as wide as a terminal draws it: 0 for combining marks and joiners, 2 for East
/// Asian wide and fullwidth characters and emoji, 1 otherwise. Our own escape sequences (`ESC [`
/// … a final byte: colours) take no columns; text from the network never has any (``Render/plain(_:)``).
enum TextWidth {
    /// The columns `text` takes on one line.
    static func columns(_ text: String) -> Int {
        var total = 0
        var escape = EscapeScanner()
        for character in text where !escape.consumes(character) { total += columns(of: character) }
        return total
    }

    /// `text` in at most `limit` columns: whole when it fits, else cut with "…" at the end. Escape
    /// sequences are kept (none is cut in two), and a cut line that had any ends with a reset, so a
    /// colour never runs on past the cut.
    static func fit(_ text: String, columns limit: Int) -> String {
        guard columns(text) > limit else { return text }
        guard limit > 0 else { return "" }
        var out = ""
        var used = 0
        var escape = EscapeScanner()
        var styled = false
        for character in text {
            if escape.consumes(character) {
                out.append(character)
                styled = true
                continue
            }
            let width = columns(of: character)
            if used + width > limit - 1 { break }
            out.append(character)
            used += width
        }
        return out + "…" + (styled ? TerminalStyle.reset : "")
    }

    /// The columns one character (grapheme cluster) takes.
    static func columns(of character: Character) -> Int {
        var width = 0
        for scalar in character.unicodeScalars {
            let value = scalar.value
            if value == 0xFE0F { return 2 }  // emoji presentation selector: drawn as an emoji
            width = max(width, columns(of: scalar))
        }
        return width
    }

    private static func columns(of scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }
        if value < 0x300 { return 1 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if scalar.properties.isEmojiPresentation { return 2 }
        for range in wide where range.contains(value) { return 2 }
        return 1
    }

    /// East Asian Wide and Fullwidth ranges (Unicode's EastAsianWidth.txt, W and F, in blocks).
    private static let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
        0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60,
        0xFFE0...0xFFE6, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    /// Tells the characters of an escape sequence (`ESC [` parameters, then a final byte in
    /// `@`…`~`) from those that are drawn.
    private struct EscapeScanner {
        private var state = 0  // 0: text, 1: after ESC, 2: inside `ESC [`

        mutating func consumes(_ character: Character) -> Bool {
            switch state {
            case 1:
                state = character == "[" ? 2 : 0
                return true
            case 2:
                if let ascii = character.asciiValue, (0x40...0x7E).contains(ascii) { state = 0 }
                return true
            default:
                if character == "\u{1B}" {
                    state = 1
                    return true
                }
                return false
            }
        }
    }
}
