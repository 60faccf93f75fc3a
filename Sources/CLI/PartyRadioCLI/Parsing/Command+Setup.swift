extension Command {
    /// The commands that set a machine up rather than play.
    public static let setupNames = ["doctor", "man", "completion"]

    /// A shell that `partyradio completion` writes a completion script for.
    public enum Shell: String, Equatable, Sendable, CaseIterable {
        case bash, zsh
    }

    /// `partyradio man`: the manual page, roff, to stdout.
    static func parseMan(_ arguments: [String]) throws(UsageError) -> Command {
        var scanner = ArgumentScanner(arguments, command: "man")
        if let option = scanner.nextOption() { throw scanner.unknown(option) }
        try noPositionals(scanner)
        return .manPage
    }

    /// `partyradio completion bash|zsh`: the shell's completion script, to stdout.
    static func parseCompletion(_ arguments: [String]) throws(UsageError) -> Command {
        var scanner = ArgumentScanner(arguments, command: "completion")
        if let option = scanner.nextOption() { throw scanner.unknown(option) }
        guard scanner.positionals.count == 1, let shell = Shell(rawValue: scanner.positionals[0]) else {
            let got = scanner.positionals.isEmpty ? "nothing" : "'\(scanner.positionals.joined(separator: " "))'"
            throw UsageError("'completion' takes one shell: bash or zsh; got \(got).", command: "completion")
        }
        return .completion(shell)
    }
}
