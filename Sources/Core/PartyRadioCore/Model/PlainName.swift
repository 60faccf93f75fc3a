/// Why a name a person typed (a station's, a guest's) cannot be used.
public enum NameProblem: Error, Equatable, Sendable {
    case empty
    case tooLong(Int)
    case controlCharacters
}

/// The one rule for names people type: trimmed, 1 to `maxCharacters` characters, no control
/// characters.
enum PlainName {
    static func validate(_ raw: String, maxCharacters: Int) throws(NameProblem) -> String {
        let trimmed = raw.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .empty }
        guard trimmed.count <= maxCharacters else { throw .tooLong(trimmed.count) }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .controlCharacters
        }
        return trimmed
    }
}
