/// A guest's display name (`--as NAME`): 1–32 characters after trimming (at most 64 bytes of
/// UTF-8, what the wire carries), no control characters. What the DJ shows in its listener list
/// and `stations --json` carries.
public struct GuestName: Hashable, Sendable, CustomStringConvertible {
    public static let maxCharacters = 32
    public static let maxBytes = 64
    public let value: String

    public typealias Problem = NameProblem

    public init(validating raw: String) throws(Problem) {
        value = try PlainName.validate(raw, maxCharacters: Self.maxCharacters, maxBytes: Self.maxBytes)
    }

    /// `text` cut to fit a name: whole characters, within both limits.
    static func fitted(_ text: String) -> String {
        var out = String(text.prefix(maxCharacters))
        while out.utf8.count > maxBytes { out.removeLast() }
        return out
    }

    /// The default name, `user@host`, made to fit (cut to 32 characters; control characters
    /// dropped); `guest` when both are empty.
    public static func defaultName(user: String, host: String) -> GuestName {
        let parts = [user, host].map(Self.cleaned).filter { !$0.isEmpty }
        return (try? GuestName(validating: fitted(parts.joined(separator: "@"))))
            ?? GuestName(trusted: "guest")
    }

    /// A name that arrived from the network (untrusted): cleaned and cut to fit, or nil when
    /// nothing printable is left.
    public static func fromNetwork(_ raw: String) -> GuestName? {
        try? GuestName(validating: fitted(cleaned(raw)))
    }

    /// `raw` as ``ShownText`` shows it (escape sequences, control and invisible characters gone,
    /// tabs and line breaks made spaces, stacked combining marks cut), without surrounding white space.
    public static func cleaned(_ raw: String) -> String {
        ShownText.cleaned(raw).trimmingWhitespace()
    }

    private init(trusted: String) { value = trusted }

    public var description: String { value }
}
