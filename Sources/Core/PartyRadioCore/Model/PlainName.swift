/// Why a name a person typed (a station's, a guest's) cannot be used.
public enum NameProblem: Error, Equatable, Sendable {
    case empty
    case tooLong(Int)
    /// Within the characters but over the bytes of UTF-8 (accents take 2, emoji 4): the count.
    case tooManyBytes(Int, limit: Int)
    /// Control characters, or anything else ``ShownText`` would not show as typed: invisible
    /// characters (zero-width, tags), tabs and line breaks, more combining marks on a letter than
    /// ``ShownText/maxMarksPerCharacter``.
    case controlCharacters
}

/// The one rule for names people type: trimmed, 1 to `maxCharacters` characters and at most
/// `maxBytes` bytes of UTF-8, nothing that ``ShownText`` would change (control or invisible
/// characters, stacked combining marks).
enum PlainName {
    static func validate(_ raw: String, maxCharacters: Int, maxBytes: Int) throws(NameProblem) -> String {
        let trimmed = raw.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .empty }
        guard trimmed.count <= maxCharacters else { throw .tooLong(trimmed.count) }
        guard trimmed.utf8.count <= maxBytes else { throw .tooManyBytes(trimmed.utf8.count, limit: maxBytes) }
        guard !trimmed.unicodeScalars.contains(where: \.isNeverShown), ShownText.cleaned(trimmed) == trimmed else {
            throw .controlCharacters
        }
        return trimmed
    }
}

extension Unicode.Scalar {
    /// Never shown from untrusted text (names, chat, titles, the catalog's words): control
    /// characters, escape sequences among them; the bidirectional controls (U+061C,
    /// U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), which reorder the text after them on a
    /// terminal or a page ("Bob\u{202E}3pm.exe"); and the other invisible format characters
    /// (zero-width space and non-joiner, word joiner, byte order mark, soft hyphen, …) and the tag
    /// characters (U+E0000–U+E007F), with which two names that look alike differ or text hides.
    /// The zero-width joiner is not among them: ``ShownText`` keeps it between emoji, which need it.
    /// Variation selectors stay too.
    public var isNeverShown: Bool {
        switch properties.generalCategory {
        case .control: return true
        case .format: return self != ShownText.zeroWidthJoiner && !isVisibleFormat
        default: return properties.isBidiControl || (0xE0000...0xE007F).contains(value)
        }
    }

    /// The format characters that show something: the Arabic, Syriac and Kaithi number signs and
    /// marks that go before digits (Prepended_Concatenation_Mark).
    private var isVisibleFormat: Bool {
        switch value {
        case 0x0600...0x0605, 0x06DD, 0x070F, 0x0890...0x0891, 0x08E2, 0x110BD, 0x110CD: true
        default: false
        }
    }
}
