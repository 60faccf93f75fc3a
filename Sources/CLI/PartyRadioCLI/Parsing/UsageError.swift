/// A usage error: exit code 2, printed as `Error: <message>` and a hint naming the command's help.
public struct UsageError: Error, Equatable, Sendable {
    public var message: String
    /// The command whose `--help` the hint names (nil: the top-level help).
    public var command: String?

    public init(_ message: String, command: String? = nil) {
        self.message = message
        self.command = command
    }

    public var hint: String { "See 'partyradio \(command.map { "\($0) " } ?? "")--help'." }
}
