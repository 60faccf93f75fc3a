/// Why a name a person typed (a station's, a guest's) cannot be used.
public enum NameProblem: Error, Equatable, Sendable {
    case empty
    case tooLong(Int)
    /// Within the characters but over the bytes of UTF-8 (accents take 2, emoji 4): the count.
    case tooManyBytes(Int, limit: Int)
    case controlCharacters
}

/// The one rule for names people type: trimmed, 1 to `maxCharacters` characters and at most
/// `maxBytes` bytes of UTF-8, no control characters.
enum PlainName {
    static func validate(_ raw: String, maxCharacters: Int, maxBytes: Int) throws(NameProblem) -> String {
        let trimmed = raw.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .empty }
        guard trimmed.count <= maxCharacters else { throw .tooLong(trimmed.count) }
        guard trimmed.utf8.count <= maxBytes else { throw .tooManyBytes(trimmed.utf8.count, limit: maxBytes) }
        guard !trimmed.unicodeScalars.contains(where: \.isNeverShown) else {
            throw .controlCharacters
        }
        return trimmed
    }
}

extension Unicode.Scalar {
    /// Never shown from untrusted text (names, chat, titles, the catalog's words): control
    /// characters, escape sequences among them, and the bidirectional controls (U+061C,
    /// U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), which reorder the text after them on a
    /// terminal or a page ("Bob\u{202E}3pm.exe"). Joiners and variation selectors stay: emoji need them.
    public var isNeverShown: Bool { properties.generalCategory == .control || properties.isBidiControl }
}
