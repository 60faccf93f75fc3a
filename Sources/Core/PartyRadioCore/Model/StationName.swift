/// A station name: 1–60 characters after trimming white space (the README, `partyradio dj`).
public struct StationName: Hashable, Sendable, CustomStringConvertible {
    public static let maxCharacters = 60
    public let value: String

    public enum Problem: Error, Equatable, Sendable {
        case empty
        case tooLong(Int)
        case controlCharacters
    }

    public init(validating raw: String) throws(Problem) {
        let trimmed = raw.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .empty }
        guard trimmed.count <= Self.maxCharacters else { throw .tooLong(trimmed.count) }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .controlCharacters
        }
        value = trimmed
    }

    public var description: String { value }
}
