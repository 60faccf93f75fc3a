/// A station name: 1–60 characters after trimming white space (the README, `partyradio dj`).
public struct StationName: Hashable, Sendable, CustomStringConvertible {
    public static let maxCharacters = 60
    public let value: String

    public typealias Problem = NameProblem

    public init(validating raw: String) throws(Problem) {
        value = try PlainName.validate(raw, maxCharacters: Self.maxCharacters)
    }

    public var description: String { value }
}
