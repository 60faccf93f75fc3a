import PartyRadioCore

/// The `partyradio` program: parses the command line and runs the command.
public enum PartyRadio {
    public static let version = "0.1.0"

    /// Runs `arguments` (without the program name) against this process's stdout and stderr.
    /// - Returns: the exit code (see ``ExitCode``).
    public static func main(arguments: [String], environment: [String: String]) -> Int32 {
        main(arguments: arguments, context: CommandContext(environment: environment))
    }

    /// Runs `arguments` with `context`'s environment, console and clock (tests collect the output).
    public static func main(arguments: [String], context: CommandContext) -> Int32 {
        let console = context.console
        if let name = arguments.first, CatalogCommands.names.contains(name) {
            return Blocking.run {
                await CatalogCommands.run(
                    name, Array(arguments.dropFirst()), environment: context.environment, console: console,
                    clock: context.clock)
            }
        }
        let command: Command
        do { command = try Command.parse(arguments) } catch {
            console.error(error.message, hint: error.hint)
            return ExitCode.usage.rawValue
        }
        switch command {
        case .help(let name):
            guard let name else {
                console.write(HelpPages.topLevel, to: .out)
                return ExitCode.success.rawValue
            }
            guard let page = HelpPages.page(for: name) ?? CatalogCommands.help(for: name) else {
                console.error("Unknown command '\(name)'.", hint: "See 'partyradio --help'.")
                return ExitCode.usage.rawValue
            }
            console.write(page.rendered, to: .out)
            return ExitCode.success.rawValue
        case .version:
            console.out("partyradio \(version)")
            return ExitCode.success.rawValue
        case .dj(let options): return NodeCommands.dj(options, context: context)
        case .listen(let options): return NodeCommands.listen(options, context: context)
        case .stations(let options): return StationsCommand.run(options, context: context)
        case .vote(let options): return NodeCommands.vote(options, context: context)
        }
    }
}
