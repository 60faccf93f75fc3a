/// The one sanitiser for untrusted text (station names, titles and tags, guest names, chat, the
/// catalog's words) before a terminal or the web page shows it (docs/SECURITY.md, "Who is trusted").
///
/// What goes, and why:
/// - **Escape sequences, whole**: ESC with what follows it (CSI `ESC [ … final`, OSC/DCS/APC/PM/SOS
///   strings up to BEL or ST, two-character escapes), and the 8-bit C1 forms. Dropping the ESC
///   alone would leave "[31m" behind; an unterminated string sequence takes the rest of the text,
///   as a terminal would.
/// - **Control characters** (``Unicode/Scalar/isNeverShown``), except that tab, carriage return,
///   line feed and the other line breaks become one space, so words on either side stay apart
///   (`keepingLineBreaks` keeps a line feed, for the program's own lines).
/// - **Invisible characters**: bidirectional controls, zero-width space, joiners and word joiner,
///   byte order mark and the other format characters, and the tag characters (U+E0000–U+E007F,
///   which can carry hidden ASCII). Two names that look the same then are the same. The zero-width
///   joiner stays between two emoji only (👨‍👩‍👧 is made with it).
/// - **Stacked combining marks** beyond ``maxMarksPerCharacter`` on one letter ("Zalgo" text, whose
///   marks spill over the lines above and below). Accented letters, Vietnamese, Devanagari and
///   emoji keycaps need at most that many.
public enum ShownText {
    public static let maxMarksPerCharacter = 3

    /// `raw` as it may be shown (see the type). Does not trim.
    public static func cleaned(_ raw: String, keepingLineBreaks: Bool = false) -> String {
        let scalars = Array(raw.unicodeScalars)
        var out = String.UnicodeScalarView()
        var marks = 0
        var previous: Unicode.Scalar?
        var spaced = false  // the last scalar kept is a space made from a tab or a line break
        var index = 0
        while index < scalars.count {
            if let end = escapeSequenceEnd(scalars, at: index) {
                index = end
                continue
            }
            let scalar = scalars[index]
            index += 1
            func keep(_ kept: Unicode.Scalar) {
                out.append(kept)
                previous = kept
                spaced = false
            }
            if scalar == "\r", index < scalars.count, scalars[index] == "\n" { continue }  // CR LF: one break
            if scalar == "\n", keepingLineBreaks {
                keep(scalar)
                marks = 0
                continue
            }
            if isBreak(scalar) {
                if !spaced {
                    keep(" ")
                    spaced = true
                }
                marks = 0
                continue
            }
            if scalar == zeroWidthJoiner {
                if let previous, joinsEmoji(previous), index < scalars.count, isEmoji(scalars[index]) {
                    keep(scalar)
                    marks = 0
                }
                continue
            }
            if scalar.isNeverShown { continue }
            if isMark(scalar) {
                guard marks < maxMarksPerCharacter else { continue }
                marks += 1
            } else {
                marks = 0
            }
            keep(scalar)
        }
        return String(out)
    }

    static let zeroWidthJoiner: Unicode.Scalar = "\u{200D}"

    /// Tab, line feed, vertical tab, form feed, carriage return, NEL, line and paragraph separators.
    static func isBreak(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x85, 0x2028, 0x2029: true
        default: false
        }
    }

    static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }

    /// A pictograph (not an ASCII digit, `#` or `*`, which Unicode also calls emoji).
    static func isEmoji(_ scalar: Unicode.Scalar) -> Bool { scalar.value > 0xFF && scalar.properties.isEmoji }

    /// What may come before a joiner in an emoji sequence: an emoji, its presentation selector (U+FE0F).
    static func joinsEmoji(_ scalar: Unicode.Scalar) -> Bool { isEmoji(scalar) || scalar == "\u{FE0F}" }

    /// The index after the escape sequence starting at `index`, or nil when none starts there.
    static func escapeSequenceEnd(_ scalars: [Unicode.Scalar], at index: Int) -> Int? {
        let count = scalars.count
        switch scalars[index].value {
        case 0x1B:
            let next = index + 1
            guard next < count else { return next }
            switch scalars[next].value {
            case 0x5B: return controlSequenceEnd(scalars, from: next + 1)  // ESC [
            case 0x5D, 0x50, 0x58, 0x5E, 0x5F: return stringEnd(scalars, from: next + 1)  // ESC ] P X ^ _
            case 0x20...0x2F:  // intermediates, then one final (ESC ( B)
                var end = next
                while end < count, (0x20...0x2F).contains(scalars[end].value) { end += 1 }
                return end < count && (0x30...0x7E).contains(scalars[end].value) ? end + 1 : end
            case 0x30...0x7E: return next + 1  // ESC 7, ESC c, ESC M …
            default: return next
            }
        case 0x9B: return controlSequenceEnd(scalars, from: index + 1)  // C1 CSI
        case 0x90, 0x98, 0x9D, 0x9E, 0x9F: return stringEnd(scalars, from: index + 1)  // C1 DCS SOS OSC PM APC
        default: return nil
        }
    }

    /// After CSI: parameter and intermediate bytes, then one final byte (`m`, `H`, `J` …). A sequence
    /// broken off by anything else ends there.
    private static func controlSequenceEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int {
        var end = start
        while end < scalars.count, (0x20...0x3F).contains(scalars[end].value) { end += 1 }
        return end < scalars.count && (0x40...0x7E).contains(scalars[end].value) ? end + 1 : end
    }

    /// After OSC, DCS, SOS, PM or APC: everything up to BEL, ESC \ or ST (U+009C), or the end.
    private static func stringEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int {
        var end = start
        while end < scalars.count {
            switch scalars[end].value {
            case 0x07, 0x9C: return end + 1
            // ESC \ ends it; an ESC before anything else ends it too, and starts a sequence of its own.
            case 0x1B: return end + 1 < scalars.count && scalars[end + 1] == "\\" ? end + 2 : end
            default: end += 1
            }
        }
        return end
    }
}
