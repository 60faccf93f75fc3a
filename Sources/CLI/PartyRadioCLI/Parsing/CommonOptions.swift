/// Options every networked command shares (PRODUCT.md, "Interfaces that users and scripts rely on").
public struct CommonOptions: Equatable, Sendable {
    /// `--interface NAME`; nil: the default route's interface, else the first multicast-capable one.
    public var interface: String?
    /// `--state-dir DIR`; nil: `$XDG_STATE_HOME/partyradio` (or `~/.local/state/partyradio`).
    public var stateDir: String?
    /// `-v`/`--verbose`: diagnostic logging to stderr.
    public var verbose = false

    public init(interface: String? = nil, stateDir: String? = nil, verbose: Bool = false) {
        self.interface = interface
        self.stateDir = stateDir
        self.verbose = verbose
    }

    static let help: [(String, String)] = [
        ("--interface <name>", "Network interface to use (default: the default route's)."),
        ("--state-dir <dir>", "Where keys and state live (default: $XDG_STATE_HOME/partyradio)."),
        ("-v, --verbose", "Log diagnostics to stderr."),
    ]

    /// Consumes `option` if it is a common one; returns false when it is not.
    mutating func consume(_ option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch option {
        case "--interface": interface = try scanner.value(for: option)
        case "--state-dir": stateDir = try scanner.value(for: option)
        case "-v", "--verbose": verbose = true
        default: return false
        }
        return true
    }
}
