/// A usage error: exit code 2, printed as `Error: <message>` and a hint naming the command's help.
public struct UsageError: Error, Equatable, Sendable {
    /// What is wrong and what to type instead.
    public var message: String
    /// The command whose `--help` the hint names (nil: the top-level help).
    public var command: String?

    /// A usage error of `command` (nil: of the command line as a whole).
    public init(_ message: String, command: String? = nil) {
        self.message = message
        self.command = command
    }

    /// The line after the message: `See 'partyradio <command> --help'.`
    public var hint: String { "See 'partyradio \(command.map { "\($0) " } ?? "")--help'." }
}
