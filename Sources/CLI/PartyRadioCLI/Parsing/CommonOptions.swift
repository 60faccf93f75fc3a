/// Options every command takes: where state lives, and how much to say on stderr.
public struct CommonOptions: Equatable, Sendable {
    /// `--state-dir DIR`; nil: ``StateDirectory/default(environment:)``.
    public var stateDir: String?
    /// `-v`/`--verbose`: diagnostics to stderr through `Log`, one timestamped line each.
    public var verbose = false

    /// The options as given; the defaults are what a command line without them means.
    public init(stateDir: String? = nil, verbose: Bool = false) {
        self.stateDir = stateDir
        self.verbose = verbose
    }

    static let help: [(String, String)] = [
        (
            "--state-dir <dir>",
            "Where keys, the catalog cache and the DJ's stats live (default: $XDG_STATE_HOME/partyradio)."
        ),
        ("-v, --verbose", "Log diagnostics to stderr, one timestamped line each."),
    ]

    /// Consumes `option` if it is a common one; returns false when it is not.
    mutating func consume(_ option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> Bool {
        switch option {
        case "--state-dir":
            let directory = try scanner.value(for: option)
            guard !directory.isEmpty else {
                throw UsageError("'--state-dir' needs a directory.", command: scanner.command)
            }
            stateDir = directory
        case "-v", "--verbose": verbose = true
        default: return false
        }
        return true
    }
}
