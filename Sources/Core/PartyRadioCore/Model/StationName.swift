/// A station name: 1–60 characters after trimming white space (the README, `partyradio dj`),
/// and at most 63 bytes of UTF-8: a DNS-SD instance name is one DNS label.
public struct StationName: Hashable, Sendable, CustomStringConvertible {
    public static let maxCharacters = 60
    public static let maxBytes = 63
    public let value: String

    public typealias Problem = NameProblem

    public init(validating raw: String) throws(Problem) {
        value = try PlainName.validate(raw, maxCharacters: Self.maxCharacters, maxBytes: Self.maxBytes)
    }

    public var description: String { value }
}
