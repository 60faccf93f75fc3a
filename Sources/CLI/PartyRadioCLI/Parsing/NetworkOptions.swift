import PartyRadioCore

/// Options of the commands that go on the network (`dj`, `listen`, `stations`, `vote`).
public struct NetworkOptions: Equatable, Sendable {
    /// `--interface NAME`; nil: the default route's interface, else the first multicast-capable one.
    public var interface: String?
    /// `--code CODE`: a private station's join code (guests' commands only; the DJ makes its own).
    public var code: JoinCode?

    /// The options as given.
    public init(interface: String? = nil, code: JoinCode? = nil) {
        self.interface = interface
        self.code = code
    }

    static let help: [(String, String)] = [
        ("--interface <name>", "Network interface to use (default: the default route's).")
    ]

    /// The options of guests' commands: with `--code`.
    static let guestHelp: [(String, String)] =
        [("--code <code>", "A private station's join code, as the DJ's terminal shows it (e.g. K7QX-3MZD-9TRFA).")]
        + help

    /// Consumes `option` if it is a network one; returns false when it is not.
    mutating func consume(_ option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch option {
        case "--interface": interface = try scanner.value(for: option)
        case "--code":
            let raw = try scanner.value(for: option)
            do { code = try JoinCode(parsing: raw) } catch {
                throw UsageError(
                    "'--code' takes the join code the DJ's terminal shows: \(JoinCode.length) letters and digits "
                        + "like K7QX-3MZD-9TRFA; got '\(raw)'.", command: scanner.command)
            }
        default: return false
        }
        return true
    }
}
